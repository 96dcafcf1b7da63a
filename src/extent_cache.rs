//! The extent map kept on disk between runs (user cache directory, atomic write, versioned).
