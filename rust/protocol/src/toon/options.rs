//! Encoder and decoder options.

/// The character that separates cells of inline arrays and tabular rows.
///
/// The encoder declares it in every array header it writes (comma by omission),
/// and the decoder reads it back from each header, so a document never depends
/// on the options it was decoded with to find its delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Delimiter {
    /// `,` — the default, declared by omission in headers.
    #[default]
    Comma,
    /// Horizontal tab, declared as `[N\t]`.
    Tab,
    /// `|`, declared as `[N|]`.
    Pipe,
}

impl Delimiter {
    /// The delimiter as the single ASCII byte it is written as.
    pub const fn as_byte(self) -> u8 {
        match self {
            Delimiter::Comma => b',',
            Delimiter::Tab => b'\t',
            Delimiter::Pipe => b'|',
        }
    }

    pub(crate) const fn from_byte(byte: u8) -> Option<Delimiter> {
        match byte {
            b',' => Some(Delimiter::Comma),
            b'\t' => Some(Delimiter::Tab),
            b'|' => Some(Delimiter::Pipe),
            _ => None,
        }
    }

    /// How the delimiter is shown in error messages (a tab is invisible).
    pub(crate) const fn display(self) -> &'static str {
        match self {
            Delimiter::Comma => ",",
            Delimiter::Tab => "\\t",
            Delimiter::Pipe => "|",
        }
    }
}

/// Options for [`encode`](super::encode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Spaces per indentation level (default 2). Zero is treated as 1: a
    /// document without indentation could not express nesting.
    pub indent: usize,
    /// The document delimiter, used in every array header and row.
    pub delimiter: Delimiter,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        Self {
            indent: 2,
            delimiter: Delimiter::Comma,
        }
    }
}

/// Options for [`decode`](super::decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// Spaces per indentation level (default 2). Zero is rejected with an error.
    pub indent: usize,
    /// Strict mode (default true): declared counts, exact indentation, no tabs
    /// in indentation, no blank lines inside arrays, no duplicate keys.
    /// Non-strict mode resolves duplicate keys last-write-wins, as the spec says.
    pub strict: bool,
    /// Deepest nesting of objects and arrays accepted (default 128). Deeper
    /// documents are rejected before they can exhaust memory or stack.
    pub max_depth: usize,
    /// The most bytes the decoded value may take, counted while it is built (strings,
    /// array elements, object entries and their keys; see [`crate::budget`]). `None`, the
    /// default, is [`crate::budget::decode_budget`] of the document's length
    /// (16 × its size + 1 MiB); `Some(usize::MAX)` turns the budget off.
    pub max_decoded_bytes: Option<usize>,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        Self {
            indent: 2,
            strict: true,
            max_depth: 128,
            max_decoded_bytes: None,
        }
    }
}
