//! Runs the TOON conformance fixtures (set v4.1.1, read with v4.4 semantics).
//!
//! The fixtures are vendored at `tests/toon-fixtures` (with their MIT licence);
//! the Java `ToonTest` reads the same copy. A missing directory fails the run
//! rather than skipping it. Every case is named `file#index`, and the summary
//! line is printed on every run (this target has no libtest harness, so
//! nothing captures it).

mod support;

use std::fs;
use std::path::{Path, PathBuf};

use ide_mcp_protocol::toon::{self, DecodeOptions, Delimiter, EncodeOptions};
use serde_json::Value;
use support::same_value;

const EXPECTED_CASES: usize = 538;

/// v4.4 dropped these strict:false recoveries: each now expects an error.
const V4_4_FLIPS: &[(&str, usize)] = &[
    ("decode/delimiters.json", 28),
    ("decode/objects-keyed.json", 18),
    ("decode/objects.json", 23),
    ("decode/objects.json", 24),
    ("decode/objects.json", 25),
    ("decode/objects.json", 26),
    ("decode/objects.json", 53),
];

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/toon-fixtures/spec-v4.1.1/tests/fixtures")
}

fn encode_options(options: Option<&Value>) -> EncodeOptions {
    let mut result = EncodeOptions::default();
    if let Some(options) = options {
        if let Some(delimiter) = options.get("delimiter").and_then(Value::as_str) {
            result.delimiter = match delimiter {
                "\t" => Delimiter::Tab,
                "|" => Delimiter::Pipe,
                _ => Delimiter::Comma,
            };
        }
        if let Some(indent) = options.get("indentSize").and_then(Value::as_u64) {
            result.indent = usize::try_from(indent).expect("small indent");
        }
    }
    result
}

fn decode_options(options: Option<&Value>) -> DecodeOptions {
    let mut result = DecodeOptions::default();
    if let Some(options) = options {
        if let Some(strict) = options.get("strict").and_then(Value::as_bool) {
            result.strict = strict;
        }
        if let Some(indent) = options.get("indentSize").and_then(Value::as_u64) {
            result.indent = usize::try_from(indent).expect("small indent");
        }
    }
    result
}

/// Runs one case; `Err` describes the failure.
fn run_case(kind: &str, case: &Value, expect_error: bool) -> Result<(), String> {
    let input = &case["input"];
    let expected = &case["expected"];
    if kind == "encode" {
        let output = toon::encode(input, &encode_options(case.get("options")));
        let expected = expected
            .as_str()
            .ok_or("encode case without string expectation")?;
        if output != expected {
            return Err(format!("encoded {output:?}, expected {expected:?}"));
        }
        return Ok(());
    }
    let text = input.as_str().ok_or("decode case without string input")?;
    match (
        toon::decode(text, &decode_options(case.get("options"))),
        expect_error,
    ) {
        (Ok(value), true) => Err(format!("decoded {value} but an error was expected")),
        (Err(_), true) => Ok(()),
        (Err(error), false) => Err(format!("error {error}, expected {expected}")),
        (Ok(value), false) if same_value(&value, expected) => Ok(()),
        (Ok(value), false) => Err(format!("decoded {value}, expected {expected}")),
    }
}

fn main() {
    let root = fixtures_dir();
    assert!(
        root.is_dir(),
        "TOON fixtures not found at {}",
        root.display()
    );
    let mut total = 0;
    let mut failures = Vec::new();
    for kind in ["decode", "encode"] {
        let mut files: Vec<PathBuf> = fs::read_dir(root.join(kind))
            .unwrap_or_else(|error| panic!("reading {kind} fixtures: {error}"))
            .map(|entry| entry.expect("directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        for path in files {
            let file_name = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("UTF-8 file name");
            let label = format!("{kind}/{file_name}");
            let text = fs::read_to_string(&path).expect("readable fixture file");
            let suite: Value = serde_json::from_str(&text).expect("fixture file is JSON");
            let cases = suite["tests"].as_array().expect("fixture file has tests");
            for (index, case) in cases.iter().enumerate() {
                total += 1;
                let id = (label.as_str(), index);
                let expect_error = case
                    .get("shouldError")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    || V4_4_FLIPS.contains(&id);
                if let Err(reason) = run_case(kind, case, expect_error) {
                    let name = case["name"].as_str().unwrap_or("");
                    failures.push(format!("{label}#{index} ({name}): {reason}"));
                }
            }
        }
    }
    let passed = total - failures.len();
    println!("TOON fixtures: {passed} of {total} passed (v4.4 semantics)");
    for failure in &failures {
        println!("  FAILED {failure}");
    }
    assert_eq!(total, EXPECTED_CASES, "fixture count changed");
    assert!(
        failures.is_empty(),
        "{} TOON fixture cases failed",
        failures.len()
    );
}
