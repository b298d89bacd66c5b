//! Encodes or decodes one of the codec bench's payloads a fixed number of times, for
//! instruction counts under callgrind (deterministic, unlike the criterion times):
//!
//! ```sh
//! cargo build --release -p ide-mcp-protocol --example codec_ops
//! valgrind --tool=callgrind --toggle-collect='*codec_ops*repeat*' \
//!     target/release/examples/codec_ops b_table_100 decode 1000
//! ```
//!
//! Only `repeat` is counted, so the instructions divided by the count are one call's,
//! without the process start or building the payload. `scripts/profile-weigh.sh` uses it.

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
        eprintln!("usage: codec_ops <payload> encode|decode <count>");
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
    match operation.as_str() {
        "encode" => repeat(count, || {
            black_box(toon::encode(black_box(&value), &encode_options));
        }),
        "decode" => repeat(count, || {
            let decoded = toon::decode(black_box(&text), &decode_options);
            assert!(black_box(decoded).is_ok(), "the payload decodes");
        }),
        _ => {
            eprintln!("codec_ops: encode or decode, not {operation}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
