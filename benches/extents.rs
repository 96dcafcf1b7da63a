//! Placeholder: the benches for this budget are being written.
fn main() {}
