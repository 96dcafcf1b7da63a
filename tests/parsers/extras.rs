//! Tests for the extras parser(s): written with the parser.
