//! Codec throughput: our TOON encoder and decoder against `serde_json` (the JSON
//! baseline) and the `toon-format` crate, on four payloads:
//! (a) a small JSON-RPC `tools/call` request,
//! (b) a `tools/call` result holding a 100-row uniform table,
//! (c) the same with 10,000 rows,
//! (d) deeply nested, non-uniform data (list form throughout).
//!
//! Throughput is per byte of each format's own text (TOON text for the TOON
//! benches, JSON text for serde_json), so compare times for the same payload.
//!
//! Run: `cargo bench -p ide-mcp-protocol --bench codec`

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ide_mcp_protocol::toon::{self, DecodeOptions, EncodeOptions};
use serde_json::Value;

mod payloads;

use payloads::payloads;

fn bench_codecs(c: &mut Criterion) {
    let encode_options = EncodeOptions::default();
    let decode_options = DecodeOptions::default();
    let their_encode_options = toon_format::EncodeOptions::default();
    let their_decode_options = toon_format::DecodeOptions::default();

    for (name, value) in payloads() {
        let toon_text = toon::encode(&value, &encode_options);
        let json_text = serde_json::to_string(&value).expect("serialisable");
        toon::decode(&toon_text, &decode_options).expect("our output decodes");
        println!(
            "{name}: TOON {} bytes, JSON {} bytes",
            toon_text.len(),
            json_text.len()
        );

        let mut group = c.benchmark_group(name);
        group.warm_up_time(Duration::from_millis(300));
        group.measurement_time(Duration::from_millis(1500));
        group.sample_size(if name == "c_table_10k" { 10 } else { 30 });

        group.throughput(Throughput::Bytes(toon_text.len() as u64));
        // A fresh String per call, like serde_json::to_string.
        group.bench_function(BenchmarkId::new("toon_encode", "ours"), |b| {
            b.iter(|| toon::encode(&value, &encode_options))
        });
        group.bench_function(BenchmarkId::new("toon_decode", "ours"), |b| {
            b.iter(|| toon::decode(&toon_text, &decode_options).expect("valid"))
        });
        group.bench_function(BenchmarkId::new("toon_encode", "toon-format"), |b| {
            b.iter(|| toon_format::encode(&value, &their_encode_options).expect("encodes"))
        });
        group.bench_function(BenchmarkId::new("toon_decode", "toon-format"), |b| {
            b.iter(|| {
                toon_format::decode::<Value>(&toon_text, &their_decode_options).expect("valid")
            })
        });

        group.throughput(Throughput::Bytes(json_text.len() as u64));
        group.bench_function(BenchmarkId::new("json_encode", "serde_json"), |b| {
            b.iter(|| serde_json::to_string(&value).expect("serialisable"))
        });
        group.bench_function(BenchmarkId::new("json_decode", "serde_json"), |b| {
            b.iter(|| serde_json::from_str::<Value>(&json_text).expect("valid"))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_codecs);
criterion_main!(benches);
