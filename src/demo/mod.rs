//! The simulated Informix instance behind `--demo`: prints real onstat/oncheck/procfs formats.
