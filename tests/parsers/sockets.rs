//! Tests for the sockets parser(s): written with the parser.
