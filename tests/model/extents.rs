//! Extent map tests: written with the extent map.
