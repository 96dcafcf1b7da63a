//! Tests for the drill parser(s): written with the parser.
