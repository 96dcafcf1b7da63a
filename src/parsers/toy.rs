//! A toy parser, in test builds only: the three load averages of `/proc/loadavg`. With its one
//! entry in the source registry (`Source::Toy`) it is a whole source: `instance::toy` shows it
//! collected, recorded, stored, listed in the header's sources and read by `ifxtop parse`.

use crate::error::ParseError;
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadAvg {
    pub one: f64,
    pub five: f64,
    pub fifteen: f64,
}

record!(LoadAvg, none);

/// `0.50 0.40 0.30 1/123 4567`: the first three numbers.
pub fn parse(text: &str) -> Result<LoadAvg, ParseError> {
    let mut n = text.split_whitespace().map(str::parse::<f64>);
    match (n.next(), n.next(), n.next()) {
        (Some(Ok(one)), Some(Ok(five)), Some(Ok(fifteen))) => Ok(LoadAvg { one, five, fifteen }),
        _ => Err(ParseError::at(
            1,
            text.lines().next().unwrap_or_default(),
            0,
            "three load averages (`0.50 0.40 0.30 1/123 4567`)",
        )),
    }
}
