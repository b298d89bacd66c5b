//! The decoder's error type: where it went wrong, and why.

use std::fmt;

/// A TOON document could not be decoded.
///
/// Carries the 1-based line and column (in characters) of the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    line: usize,
    column: usize,
    message: String,
}

impl DecodeError {
    pub(crate) fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            column,
            message: message.into(),
        }
    }

    /// 1-based line number.
    pub fn line(&self) -> usize {
        self.line
    }

    /// 1-based column, counted in Unicode scalar values.
    pub fn column(&self) -> usize {
        self.column
    }

    /// What was wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for DecodeError {}
