//! CLI tests of `ifxtop parse`.
