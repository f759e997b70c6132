//! Placeholder: being written.

pub mod compression;
