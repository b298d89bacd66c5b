//! The servers under test: ours (Rust handlers, or Java handlers through a JVM), a raw echo
//! socket (the floor), and rmcp.

pub mod jvm;
pub mod ours;
pub mod raw;
pub mod rmcp;
