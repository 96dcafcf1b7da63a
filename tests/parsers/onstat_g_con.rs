//! Tests for the onstat_g_con parser(s): written with the parser.
