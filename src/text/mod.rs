//! Plain-text utilities shared by every layer; a leaf module that imports nothing of the crate.

pub mod clip;
