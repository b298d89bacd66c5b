//! The decoder's error type: where it went wrong, and why.

use std::fmt;

/// A TOON document could not be decoded.
///
/// Carries the 1-based line and column (in characters) of the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(Box<Details>);

/// Behind a box so that every `Result` the decoder passes around is one word wider than
/// its value at most: most of them are `Result<(), _>` or `Result<Value, _>` on the hot
/// path, and an inline 40-byte error made each one a copy through memory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Details {
    line: usize,
    column: usize,
    message: String,
}

impl DecodeError {
    pub(crate) fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        Self(Box::new(Details {
            line,
            column,
            message: message.into(),
        }))
    }

    /// 1-based line number.
    pub fn line(&self) -> usize {
        self.0.line
    }

    /// 1-based column, counted in Unicode scalar values.
    pub fn column(&self) -> usize {
        self.0.column
    }

    /// What was wrong, without the position.
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.0.line, self.0.column, self.0.message
        )
    }
}

impl std::error::Error for DecodeError {}
