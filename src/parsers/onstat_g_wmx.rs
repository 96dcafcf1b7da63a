//! `onstat -g wmx`: mutexes with waiters. The table is `onstat -g lmx`'s under its own title,
//! read by the same code (`onstat_g_lmx`).

use super::onstat_g_lmx;
use crate::error::ParseError;

/// The record of `onstat -g wmx`: the same as `onstat -g lmx`'s.
pub type OnstatGWmx = onstat_g_lmx::OnstatGLmx;

/// Parses the output of `onstat -g wmx`.
pub fn parse(text: &str) -> Result<OnstatGWmx, ParseError> {
    onstat_g_lmx::parse_wmx(text)
}
