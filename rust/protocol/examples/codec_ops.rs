//! Encodes or decodes one of the codec bench's payloads a fixed number of times, with our
//! TOON codec or with `serde_json` (the baseline the bench compares against), for
//! instruction counts under callgrind (deterministic, unlike the criterion times):
//!
//! ```sh
//! cargo build --release -p ide-mcp-protocol --example codec_ops
//! valgrind --tool=callgrind --toggle-collect='*codec_ops*repeat*' \
//!     target/release/examples/codec_ops b_table_100 decode 1000
//! ```
//!
//! Only `repeat` is counted, so the instructions divided by the count are one call's,
//! without the process start or building the payload. `json-encode` and `json-decode` run
//! `serde_json::to_string` and `serde_json::from_str::<Value>` on the same value, as the
//! bench does. `scripts/bench.sh` and `scripts/profile-weigh.sh` use it.

use std::hint::black_box;
use std::process::ExitCode;

use ide_mcp_protocol::toon::{self, DecodeOptions, EncodeOptions};

#[path = "../benches/payloads/mod.rs"]
mod payloads;

#[inline(never)]
fn repeat(count: usize, mut operation: impl FnMut()) {
    for _ in 0..count {
        operation();
    }
}

fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [name, operation, count] = arguments.as_slice() else {
        eprintln!("usage: codec_ops <payload> encode|decode|json-encode|json-decode <count>");
        return ExitCode::from(2);
    };
    let Ok(count) = count.parse::<usize>() else {
        eprintln!("codec_ops: not a count: {count}");
        return ExitCode::from(2);
    };
    let Some((_, value)) = payloads::payloads()
        .into_iter()
        .find(|(payload, _)| payload == name)
    else {
        eprintln!("codec_ops: no payload {name}");
        return ExitCode::from(2);
    };
    let encode_options = EncodeOptions::default();
    let decode_options = DecodeOptions::default();
    let text = toon::encode(&value, &encode_options);
    let json_text = serde_json::to_string(&value).expect("the payload serialises");
    match operation.as_str() {
        "encode" => repeat(count, || {
            black_box(toon::encode(black_box(&value), &encode_options));
        }),
        "decode" => repeat(count, || {
            let decoded = toon::decode(black_box(&text), &decode_options);
            assert!(black_box(decoded).is_ok(), "the payload decodes");
        }),
        "json-encode" => repeat(count, || {
            let encoded = serde_json::to_string(black_box(&value));
            assert!(black_box(encoded).is_ok(), "the payload serialises");
        }),
        "json-decode" => repeat(count, || {
            let decoded = serde_json::from_str::<serde_json::Value>(black_box(&json_text));
            assert!(black_box(decoded).is_ok(), "the payload parses");
        }),
        _ => {
            eprintln!("codec_ops: encode, decode, json-encode or json-decode, not {operation}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
