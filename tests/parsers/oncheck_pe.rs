//! Tests for the oncheck_pe parser(s): written with the parser.
