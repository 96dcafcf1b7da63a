//! CLI tests of `ifxtop resolve`.
