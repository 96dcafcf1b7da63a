//! Tests for the onstat_x parser(s): written with the parser.
