//! Tests for the onstat_u parser(s): written with the parser.
