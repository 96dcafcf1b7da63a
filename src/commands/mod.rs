//! The commands besides the live screen: `parse`, `resolve`, `snapshot`, and the shell
//! completions and manual page (`manual`).

pub mod manual;
pub mod parse;
pub mod resolve;
pub mod snapshot;
