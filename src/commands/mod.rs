//! The commands besides the live screen: `parse`, `resolve`, `snapshot`.

pub mod parse;
pub mod resolve;
pub mod snapshot;
