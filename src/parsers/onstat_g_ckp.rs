//! Placeholder: the parser for this command is being written.

use crate::error::ParseError;

pub fn parse(text: &str) -> Result<(), ParseError> {
    let _ = text;
    Err(ParseError::empty("parser not written yet"))
}
