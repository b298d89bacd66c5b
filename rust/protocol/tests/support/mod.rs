//! JSON comparisons shared by the protocol crate's tests and its fuzz targets, which include
//! this file by path (`rust/protocol/fuzz/fuzz_targets/toon_decode.rs`).
#![allow(dead_code)]

use serde_json::Value;

/// Equal as JSON with numbers compared by value (`1.0` equals `1`, `-0` equals `0`); object
/// key order must match too.
pub fn same_value(a: &Value, b: &Value) -> bool {
    compare(a, b, true)
}

/// As [`same_value`], but objects may list their keys in another order: a table writes every
/// row in its header's order, so a row that listed its keys differently comes back in header
/// order.
pub fn same_content(a: &Value, b: &Value) -> bool {
    compare(a, b, false)
}

fn compare(a: &Value, b: &Value, ordered: bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| compare(x, y, ordered))
        }
        (Value::Object(x), Value::Object(y)) if ordered => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, vx), (ky, vy))| kx == ky && compare(vx, vy, ordered))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, vx)| y.get(k).is_some_and(|vy| compare(vx, vy, ordered)))
        }
        _ => a == b,
    }
}
