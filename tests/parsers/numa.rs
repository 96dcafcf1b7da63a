//! Tests for the numa parser(s): written with the parser.
