//! Demo output tests: written with the demo.
