//! The codec bench's four payloads, shared by `benches/codec.rs` and
//! `examples/codec_ops.rs`.

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
    if index.is_multiple_of(2) {
        node.insert("weight".into(), json!(index as f64 * 0.37));
    }
    if index.is_multiple_of(3) {
        node.insert("tags".into(), json!(["alpha", "beta, gamma", "δ"]));
    }
    if depth > 0 {
        let children: Vec<Value> = (0..3)
            .map(|child| nested(depth - 1, index * 3 + child + 1))
            .collect();
        node.insert("children".into(), Value::Array(children));
        node.insert(
            "meta".into(),
            json!({"visited": index.is_multiple_of(5), "path": [depth, index]}),
        );
    }
    Value::Object(node)
}

/// The payloads by name, in the order the report lists them.
pub fn payloads() -> Vec<(&'static str, Value)> {
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
