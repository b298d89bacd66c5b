//! The servers under test: ours, a raw echo socket (the floor), and rmcp.

pub mod ours;
pub mod raw;
pub mod rmcp;
