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
use serde_json::{json, Value};

fn small_request() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {
            "name": "read_file",
            "arguments": {"path": "src/main.rs", "start_line": 1, "end_line": 120, "follow_symlinks": false}
        }
    })
}

fn table_result(rows: usize) -> Value {
    let kinds = ["function", "struct", "enum", "trait", "const"];
    let symbols: Vec<Value> = (0..rows)
        .map(|i| {
            json!({
                "name": format!("symbol_{i}"),
                "kind": kinds[i % kinds.len()],
                "file": format!("src/module_{}/file_{}.rs", i % 17, i % 5),
                "line": 10 + i * 3,
                "column": i % 80,
                "exported": i % 3 == 0,
                "score": (i as f64) * 0.731 + 0.5,
                "doc": if i % 4 == 0 { format!("Returns the {i}th item, or none") } else { String::new() },
            })
        })
        .collect();
    json!({
        "jsonrpc": "2.0",
        "id": 42,
        "result": {"symbols": symbols, "truncated": false}
    })
}

/// A tree whose siblings differ in shape, so arrays stay in list form.
fn nested(depth: usize, index: usize) -> Value {
    let mut node = serde_json::Map::new();
    node.insert("id".into(), json!(index));
    node.insert(
        "label".into(),
        json!(format!("node {index}: depth {depth}")),
    );
    if index % 2 == 0 {
        node.insert("weight".into(), json!(index as f64 * 0.37));
    }
    if index % 3 == 0 {
        node.insert("tags".into(), json!(["alpha", "beta, gamma", "δ"]));
    }
    if depth > 0 {
        let children: Vec<Value> = (0..3)
            .map(|child| nested(depth - 1, index * 3 + child + 1))
            .collect();
        node.insert("children".into(), Value::Array(children));
        node.insert(
            "meta".into(),
            json!({"visited": index % 5 == 0, "path": [depth, index]}),
        );
    }
    Value::Object(node)
}

fn payloads() -> Vec<(&'static str, Value)> {
    vec![
        ("a_small_request", small_request()),
        ("b_table_100", table_result(100)),
        ("c_table_10k", table_result(10_000)),
        (
            "d_nested",
            json!({"jsonrpc": "2.0", "id": 9, "result": nested(6, 0)}),
        ),
    ]
}

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
