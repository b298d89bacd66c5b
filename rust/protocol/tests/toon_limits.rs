//! Resource limits of the TOON codec: nesting depth, small thread stacks, huge
//! declared lengths, invalid UTF-8 and error positions.

use ide_mcp_protocol::toon::{self, DecodeOptions, EncodeOptions};
use serde_json::{json, Map, Value};

const SMALL_STACK: usize = 64 * 1024;

/// Runs `job` on a thread with a 64 KiB stack: recursion over the document's
/// nesting would overflow it and abort the test process.
fn on_small_stack<T: Send>(job: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(SMALL_STACK)
            .spawn_scoped(scope, job)
            .expect("spawn a thread")
            .join()
            .expect("the job does not panic")
    })
}

/// Drops a value without recursion (serde_json's own drop recurses per level).
fn dismantle(value: Value) {
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Value equality with an explicit stack (the derived `==` recurses per level).
fn equal_without_recursion(a: &Value, b: &Value) -> bool {
    let mut pending = vec![(a, b)];
    while let Some((a, b)) = pending.pop() {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                pending.extend(x.iter().zip(y))
            }
            (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
                for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                    if kx != ky {
                        return false;
                    }
                    pending.push((vx, vy));
                }
            }
            (Value::Array(_) | Value::Object(_), _) => return false,
            _ if a != b => return false,
            _ => {}
        }
    }
    true
}

fn nested_objects(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        let mut map = Map::new();
        map.insert("a".to_owned(), value);
        value = Value::Object(map);
    }
    value
}

fn nested_arrays(depth: usize) -> Value {
    let mut value = json!("x");
    for _ in 0..depth {
        value = Value::Array(vec![value, json!(1)]);
    }
    value
}

fn indented_objects(depth: usize) -> String {
    let mut text = String::new();
    for level in 0..depth {
        text.push_str(&"  ".repeat(level));
        text.push_str("a:\n");
    }
    text.push_str(&"  ".repeat(depth));
    text.push_str("a: 1");
    text
}

#[test]
fn field_groups_100k_deep_are_an_error_not_a_crash() {
    let text = format!(
        "x[1]{{{}b{}}}:\n  1",
        "a{".repeat(100_000),
        "}".repeat(100_000)
    );
    let result = on_small_stack(|| {
        toon::decode(&text, &DecodeOptions::default()).map_err(|e| e.to_string())
    });
    let error = result.expect_err("nesting past max_depth");
    assert!(error.contains("nest"), "{error}");
}

#[test]
fn deep_indentation_is_an_error_not_a_crash() {
    let objects = indented_objects(3000);
    let mut lists = String::new();
    for level in 0..3000 {
        lists.push_str(&"  ".repeat(level));
        lists.push_str(if level == 0 { "[1]:\n" } else { "- [1]:\n" });
    }
    for text in [&objects, &lists] {
        let result = on_small_stack(|| {
            toon::decode(text, &DecodeOptions::default()).map_err(|e| e.to_string())
        });
        assert!(result.is_err());
    }
}

#[test]
fn deep_documents_decode_without_recursion_when_allowed() {
    let text = indented_objects(3000);
    let options = DecodeOptions {
        max_depth: 10_000,
        ..DecodeOptions::default()
    };
    let value = on_small_stack(|| toon::decode(&text, &options).expect("within the raised limit"));
    let mut depth = 0;
    let mut cursor = &value;
    while let Some(inner) = cursor.get("a") {
        depth += 1;
        cursor = inner;
    }
    assert_eq!(depth, 3001);
    dismantle(value);
}

#[test]
fn max_depth_boundary() {
    let options = DecodeOptions {
        max_depth: 5,
        ..DecodeOptions::default()
    };
    // The root object plus four nested ones: five levels.
    assert!(toon::decode(&indented_objects(4), &options).is_ok());
    assert!(toon::decode(&indented_objects(5), &options).is_err());
    assert!(toon::decode("a:\n  b:\n    c:\n      d:\n        e[1]: 1", &options).is_err());
    assert!(toon::decode("a:\n  b:\n    c:\n      d[1]: 1", &options).is_ok());
}

#[test]
fn deeply_nested_values_encode_on_a_small_stack() {
    for value in [nested_objects(5000), nested_arrays(5000)] {
        let text = on_small_stack(|| toon::encode(&value, &EncodeOptions::default()));
        assert!(text.lines().count() >= 5000);
        let options = DecodeOptions {
            max_depth: 10_000,
            ..DecodeOptions::default()
        };
        let decoded = on_small_stack(|| toon::decode(&text, &options).expect("round trip"));
        assert!(equal_without_recursion(&decoded, &value));
        dismantle(decoded);
        dismantle(value);
    }
}

#[test]
fn declared_lengths_do_not_allocate() {
    for text in [
        "a[1000000000000]:\n  - 1",
        "a[18446744073709551615]: 1,2",
        "[999999999999999]{x}:\n  1",
        "m[999999999999:]{x}:\n  k: 1",
        "a[99999999999999999999999999]:",
    ] {
        assert!(
            toon::decode(text, &DecodeOptions::default()).is_err(),
            "{text}"
        );
        let lenient = DecodeOptions {
            strict: false,
            ..DecodeOptions::default()
        };
        assert!(toon::decode(text, &lenient).is_ok(), "{text}");
    }
}

#[test]
fn invalid_utf8_reports_its_position() {
    let error = toon::decode_bytes(b"a: 1\nb: x\xffy", &DecodeOptions::default())
        .expect_err("invalid UTF-8");
    assert_eq!((error.line(), error.column()), (2, 5));
    assert_eq!(error.to_string(), "line 2, column 5: invalid UTF-8");
    assert_eq!(
        toon::decode_bytes("k: é".as_bytes(), &DecodeOptions::default()).expect("valid"),
        json!({"k": "é"})
    );
}

#[test]
fn errors_carry_line_and_column() {
    let error =
        toon::decode("a: 1\nb:\n  c: \"x\\q\"", &DecodeOptions::default()).expect_err("bad escape");
    assert_eq!((error.line(), error.column()), (3, 8));
    let error = toon::decode("k: 1\nk: 2", &DecodeOptions::default()).expect_err("duplicate");
    assert_eq!((error.line(), error.column()), (2, 1));
    assert!(error.message().contains("duplicate"));
    let lenient = DecodeOptions {
        strict: false,
        ..DecodeOptions::default()
    };
    assert_eq!(
        toon::decode("k: 1\nk: 2", &lenient).expect("lenient decoding resolves duplicates"),
        serde_json::json!({ "k": 2 }),
        "non-strict mode follows the spec: the last duplicate wins"
    );
    assert!(toon::decode(
        "a: 1",
        &DecodeOptions {
            indent: 0,
            ..DecodeOptions::default()
        }
    )
    .is_err());
}

/// Small objects are built when they close and larger ones move into a map as they grow:
/// duplicates must be caught (strict) or resolved in place (non-strict) on both sides of
/// that switch, in nested objects too, and entry order must survive it.
#[test]
fn duplicate_keys_in_small_and_large_objects() {
    let lenient = DecodeOptions {
        strict: false,
        ..DecodeOptions::default()
    };
    for fields in [2usize, 8, 9, 40] {
        for duplicate_of in [0, fields / 2, fields - 1] {
            let mut text = String::from("outer:\n  inner:\n");
            for i in 0..fields {
                text.push_str(&format!("    k{i}: {i}\n"));
            }
            text.push_str(&format!("    k{duplicate_of}: dup\n  after: 1"));
            let error = toon::decode(&text, &DecodeOptions::default()).expect_err("duplicate");
            assert_eq!((error.line(), error.column()), (fields + 3, 5), "{text}");
            assert_eq!(
                error.message(),
                format!("duplicate key \"k{duplicate_of}\"")
            );

            let value = toon::decode(&text, &lenient).expect("non-strict resolves duplicates");
            let inner = value["outer"]["inner"].as_object().expect("object");
            let keys: Vec<String> = (0..fields).map(|i| format!("k{i}")).collect();
            assert_eq!(inner.keys().cloned().collect::<Vec<_>>(), keys);
            for (i, (_, found)) in inner.iter().enumerate() {
                let expected = if i == duplicate_of {
                    json!("dup")
                } else {
                    json!(i)
                };
                assert_eq!(found, &expected);
            }
            assert_eq!(value["outer"]["after"], json!(1));
        }
    }
}
