//! The decode budget: how many bytes building the [`Value`] of one message may take.
//!
//! Both decoders ([`crate::toon`] and [`crate::json::parse_strict`]) count what they build
//! while they build it — every string's bytes, every array element, every object entry with
//! its key — and stop with an error as soon as the count passes the budget, so a small
//! message cannot expand into a huge value (a long table key copied into every row, a dense
//! array of one-digit numbers). The count is a lower estimate of the heap the value takes;
//! growth slack of vectors and maps comes on top, at most about as much again. Room made in
//! advance is counted as what it would hold: an array's declared length, a TOON object's map
//! sized like its predecessor's and left partly empty.

use serde_json::Value;

/// Bytes of decoded value allowed per byte of input.
pub const DECODE_BYTES_PER_INPUT_BYTE: usize = 16;

/// Bytes of decoded value every message may take whatever its size.
pub const DECODE_BASE_BYTES: usize = 1024 * 1024;

/// The default budget for a message of `input_len` bytes:
/// `16 × input_len + 1 MiB` ([`DECODE_BYTES_PER_INPUT_BYTE`], [`DECODE_BASE_BYTES`]).
pub const fn decode_budget(input_len: usize) -> usize {
    input_len
        .saturating_mul(DECODE_BYTES_PER_INPUT_BYTE)
        .saturating_add(DECODE_BASE_BYTES)
}

/// What one array element costs besides the heap bytes of its content.
pub(crate) const NODE_BYTES: usize = std::mem::size_of::<Value>();

/// What one object entry costs besides its key's and its value's heap bytes: the key's
/// `String`, the value, the stored hash and the index slot of the ordered map.
pub const ENTRY_BYTES: usize =
    std::mem::size_of::<(String, Value)>() + 2 * std::mem::size_of::<usize>();

/// The error text for a message of `input_len` bytes that passed `budget`.
pub(crate) fn over_budget(budget: usize, input_len: usize) -> String {
    let times = budget / input_len.max(1);
    format!(
        "the message would take more than {budget} bytes to decode ({times}× its size); send less"
    )
}

/// Bytes left of a budget; every charge is a compare and a subtract.
#[derive(Debug)]
pub(crate) struct Budget {
    left: std::cell::Cell<usize>,
}

impl Budget {
    pub(crate) fn new(budget: usize) -> Self {
        Budget {
            left: std::cell::Cell::new(budget),
        }
    }

    /// Takes `bytes` from what is left; `false` (and nothing taken) when that is not enough.
    #[inline]
    pub(crate) fn take(&self, bytes: usize) -> bool {
        let left = self.left.get();
        if bytes > left {
            return false;
        }
        self.left.set(left - bytes);
        true
    }

    /// Gives back `bytes` taken for something that no longer exists.
    #[inline]
    pub(crate) fn give_back(&self, bytes: usize) {
        self.left.set(self.left.get().saturating_add(bytes));
    }

    /// Bytes left.
    #[inline]
    pub(crate) fn left(&self) -> usize {
        self.left.get()
    }

    /// How many more array elements fit, to cap a capacity reserved in advance.
    #[inline]
    pub(crate) fn nodes_left(&self) -> usize {
        self.left.get() / NODE_BYTES
    }
}
