//! Fuzzes the TOON decoder with arbitrary bytes.
//!
//! The first byte picks the decode options (strict or not, indent 1–4, a small
//! or the default nesting limit) and the encoder's delimiter; the rest is the
//! document. Properties checked:
//! - decoding never panics, hangs or overflows the stack;
//! - decoding never holds more heap than twice the decode budget of the input
//!   (`ide_mcp_protocol::budget::decode_budget`), measured by a counting allocator;
//! - an accepted document's value encodes to text that strict decoding accepts
//!   and turns back into the same value (numbers compared by value).

#![no_main]

#[path = "../../tests/support/mod.rs"]
mod support;

#[path = "../../tests/support/peak_alloc.rs"]
mod peak_alloc;

use ide_mcp_protocol::budget::decode_budget;
use ide_mcp_protocol::toon::{self, DecodeOptions, Delimiter, EncodeOptions};
use libfuzzer_sys::fuzz_target;
use peak_alloc::{peak_of, PeakCounting};
use support::same_value;

#[global_allocator]
static ALLOCATOR: PeakCounting = PeakCounting;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, document)) = data.split_first() else {
        return;
    };
    let options = DecodeOptions {
        strict: selector & 1 == 0,
        indent: 1 + usize::from((selector >> 1) & 3),
        max_depth: if selector & 8 == 0 { 128 } else { 6 },
        max_decoded_bytes: None,
    };
    let delimiter = match (selector >> 4) % 3 {
        0 => Delimiter::Comma,
        1 => Delimiter::Tab,
        _ => Delimiter::Pipe,
    };
    let (decoded, peak) = peak_of(|| toon::decode_bytes(document, &options));
    let bound = 2 * decode_budget(document.len());
    assert!(
        peak <= bound,
        "decoding {} bytes held {peak} bytes of heap, more than {bound}",
        document.len()
    );
    let Ok(value) = decoded else {
        return;
    };
    let encoded = toon::encode(
        &value,
        &EncodeOptions {
            indent: 2,
            delimiter,
        },
    );
    let strict = DecodeOptions {
        max_depth: options.max_depth,
        ..DecodeOptions::default()
    };
    match toon::decode(&encoded, &strict) {
        Ok(again) => assert!(
            same_value(&value, &again),
            "round trip changed the value\nfirst: {value}\nencoded:\n{encoded}\nagain: {again}"
        ),
        Err(error) => {
            panic!("re-encoded document rejected: {error}\nvalue: {value}\nencoded:\n{encoded}")
        }
    }
});
