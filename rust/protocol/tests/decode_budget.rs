//! The decode budget holds while decoding: a message that would expand into a huge value is
//! refused before the value exists. A counting allocator measures the peak heap of each
//! hostile decode, which is what shows the check runs during the decode and not after it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::time::{Duration, Instant};

use ide_mcp_protocol::budget::decode_budget;
use ide_mcp_protocol::json::{parse_strict, JsonErrorKind};
use ide_mcp_protocol::toon::{self, DecodeOptions};
use serde_json::json;

#[path = "support/peak_alloc.rs"]
mod peak_alloc;

use peak_alloc::{peak_of, PeakCounting};

#[global_allocator]
static ALLOCATOR: PeakCounting = PeakCounting;

/// One measurement at a time: the tests of this file share the counters.
static MEASURING: Mutex<()> = Mutex::new(());

/// The bound the tests hold a hostile decode to: the budget, plus as much again for the
/// growth slack of vectors and maps and a moving reallocation.
fn bound(input_len: usize) -> usize {
    2 * decode_budget(input_len)
}

/// `items[2000]{<1 MiB key>}:` and 2,000 one-cell rows: every row would copy the key.
fn long_key_table() -> String {
    let key = "k".repeat(1024 * 1024);
    let mut text = format!("items[2000]{{{key}}}:\n");
    for _ in 0..2000 {
        text.push_str("  1\n");
    }
    text
}

#[test]
fn a_table_whose_key_every_row_copies_is_refused_within_the_bound() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let text = long_key_table();
    let started = Instant::now();
    let (result, peak) = peak_of(|| toon::decode(&text, &DecodeOptions::default()));
    let elapsed = started.elapsed();
    let error = result.unwrap_err();
    assert!(
        error.message().contains(&format!(
            "would take more than {} bytes to decode",
            decode_budget(text.len())
        )),
        "{error}"
    );
    assert!(error.message().ends_with("send less"), "{error}");
    assert!(
        peak <= bound(text.len()),
        "peak {peak} bytes for {} input bytes",
        text.len()
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    eprintln!(
        "long-key table: {} input bytes, peak {peak} bytes, {elapsed:?}",
        text.len()
    );
}

#[test]
fn a_dense_json_array_is_refused_within_the_bound() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    // `{"a":[0,0,0,…]}`, 32 MiB: 32+ bytes of value for every 2 bytes of input.
    let mut bytes = b"{\"a\":[0".to_vec();
    while bytes.len() < 32 * 1024 * 1024 {
        bytes.extend_from_slice(b",0");
    }
    bytes.extend_from_slice(b"]}");
    let (result, peak) = peak_of(|| parse_strict(&bytes));
    let error = result.unwrap_err();
    assert_eq!(error.kind(), JsonErrorKind::TooLarge, "{error}");
    assert!(
        error.to_string().contains(&format!(
            "would take more than {} bytes to decode",
            decode_budget(bytes.len())
        )),
        "{error}"
    );
    assert!(
        peak <= bound(bytes.len()),
        "peak {peak} bytes for {} input bytes",
        bytes.len()
    );
    eprintln!("dense JSON: {} input bytes, peak {peak} bytes", bytes.len());
}

#[test]
fn the_same_dense_array_as_toon_is_refused_within_the_bound() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let count = 8 * 1024 * 1024;
    let mut text = format!("a[{count}]: 0");
    for _ in 1..count {
        text.push_str(",0");
    }
    let (result, peak) = peak_of(|| toon::decode(&text, &DecodeOptions::default()));
    let error = result.unwrap_err();
    assert!(error.message().contains("would take more than"), "{error}");
    assert!(peak <= bound(text.len()), "peak {peak} bytes");
}

#[test]
fn the_budget_can_be_set_or_turned_off() {
    let text = "a: hello\nb[3]: 1,2,3";
    let tight = DecodeOptions {
        max_decoded_bytes: Some(64),
        ..DecodeOptions::default()
    };
    assert!(toon::decode(text, &tight)
        .unwrap_err()
        .message()
        .contains("would take more than 64 bytes"));
    let off = DecodeOptions {
        max_decoded_bytes: Some(usize::MAX),
        ..DecodeOptions::default()
    };
    assert_eq!(
        toon::decode(text, &off).unwrap(),
        json!({"a": "hello", "b": [1, 2, 3]})
    );
    let json_error =
        ide_mcp_protocol::json::parse_strict_within(br#"{"a":"hello"}"#, 16).unwrap_err();
    assert_eq!(json_error.kind(), JsonErrorKind::TooLarge);
}

#[test]
fn ordinary_messages_decode_within_the_budget() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    // A tools/call with a table of arguments and a long text, as a client sends it.
    let rows: Vec<_> = (0..2000)
        .map(|i| json!({"id": i, "name": format!("file{i}.rs"), "line": i * 3, "ok": true}))
        .collect();
    let message = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "edit", "arguments": {"rows": rows, "text": "x".repeat(100_000)}}
    });
    let text = toon::encode(&message, &toon::EncodeOptions::default());
    assert_eq!(
        toon::decode(&text, &DecodeOptions::default()).unwrap(),
        message
    );
    let bytes = serde_json::to_vec(&message).unwrap();
    assert_eq!(parse_strict(&bytes).unwrap(), message);
}

#[test]
fn lists_that_declare_more_items_than_they_have_are_charged_for_what_they_reserve() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    // Non-strict mode accepts fewer items than declared; each list still reserves room for
    // the declared count (up to 1,024), which the budget counts.
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!("a{i}[1000]:\n  - 1\n"));
    }
    let lenient = DecodeOptions {
        strict: false,
        ..DecodeOptions::default()
    };
    let (result, peak) = peak_of(|| toon::decode(&text, &lenient));
    assert!(
        result
            .unwrap_err()
            .message()
            .contains("would take more than"),
        "refused"
    );
    assert!(peak <= bound(text.len()), "peak {peak} bytes");
}

#[test]
fn objects_made_with_more_room_than_they_use_are_charged_for_it() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    // An object's map is made as large as the last one closed at its depth: list items of
    // sixteen keys and of one key, taking turns, make every one-key item with room for
    // sixteen. The room counts: without it the value would take about 11× the text, with it
    // about 20×, over the budget of 16× (and 1 MiB).
    let pairs = 8000;
    let mut text = format!("l[{}]:\n", 2 * pairs);
    for _ in 0..pairs {
        text.push_str("  - k0: 1\n");
        for key in 1..16 {
            text.push_str(&format!("    k{key}: 1\n"));
        }
        text.push_str("  - a: 1\n");
    }
    let (result, peak) = peak_of(|| toon::decode(&text, &DecodeOptions::default()));
    let error = result.unwrap_err();
    assert!(error.message().contains("would take more than"), "{error}");
    assert!(peak <= bound(text.len()), "peak {peak} bytes");
    // The same items, all of one shape, leave no room unused and decode.
    let uniform: String = text
        .lines()
        .filter(|line| !line.ends_with("a: 1"))
        .collect::<Vec<_>>()
        .join("\n");
    let uniform = uniform.replacen(&format!("l[{}]", 2 * pairs), &format!("l[{pairs}]"), 1);
    let decoded = toon::decode(&uniform, &DecodeOptions::default()).unwrap();
    assert_eq!(decoded["l"].as_array().map(Vec::len), Some(pairs));
}

#[test]
fn spare_room_for_small_objects_never_crowds_out_a_message_that_fits() {
    let _guard = MEASURING
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    // Objects whose siblings had two entries get room for seven only while the budget has
    // heap to spare. A long list of two-entry items fits the budget with the room their
    // table holds (three), and would not with seven for each: it must decode.
    let items = 100_000;
    let mut text = format!("l[{items}]:\n");
    for _ in 0..items {
        text.push_str("  - alphabet: 1\n    betamax: 1\n");
    }
    let (result, peak) = peak_of(|| toon::decode(&text, &DecodeOptions::default()));
    let decoded = result.unwrap();
    assert!(peak <= bound(text.len()), "peak {peak} bytes");
    assert_eq!(decoded["l"].as_array().map(Vec::len), Some(items));
    assert_eq!(
        decoded["l"][items - 1],
        json!({"alphabet": 1, "betamax": 1})
    );
}
