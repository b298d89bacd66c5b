//! `ide-mcp toon encode|decode`, run as a separate process through standard input and output.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ide_mcp(args: &[&str], input: &str) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ide-mcp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that refuses its arguments may exit before reading its input: a broken pipe
    // here is that, and the outcome below says what happened.
    let written = child.stdin.take().unwrap().write_all(input.as_bytes());
    if let Err(error) = written {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    let output = child.wait_with_output().unwrap();
    Outcome {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn encode(args: &[&str], input: &str) -> Outcome {
    ide_mcp(&[&["toon", "encode"], args].concat(), input)
}

fn decode(args: &[&str], input: &str) -> Outcome {
    ide_mcp(&[&["toon", "decode"], args].concat(), input)
}

fn sample() -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": 7,
        "result": {
            "tools": [
                { "name": "find_file", "readOnly": true },
                { "name": "rename", "readOnly": false },
            ],
            "tags": ["a", "b c", ""],
            "nested": { "empty": {}, "list": [1, [2, 3], { "k": null }] },
            "text": "line one\nline \"two\"",
        },
    })
}

#[test]
fn encode_then_decode_gives_back_the_same_json() {
    let encoded = encode(&[], &sample().to_string());
    assert_eq!(encoded.code, 0, "{}", encoded.stderr);

    let decoded = decode(&[], &encoded.stdout);
    assert_eq!(decoded.code, 0, "{}", decoded.stderr);

    assert!(decoded.stdout.ends_with('\n'));
    assert_eq!(
        decoded.stdout.matches('\n').count(),
        1,
        "not one compact line"
    );
    let round_tripped: Value = serde_json::from_str(&decoded.stdout).unwrap();
    assert_eq!(round_tripped, sample());
}

#[test]
fn encode_writes_toon_with_a_trailing_newline() {
    let outcome = encode(&[], r#"{"name":"Ada","tags":["x","y"]}"#);

    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "name: Ada\ntags[2]: x,y\n");
    assert_eq!(outcome.stderr, "");
}

#[test]
fn encode_with_a_tab_delimiter_declares_and_uses_tabs() {
    let outcome = encode(&["--delimiter", "tab"], r#"{"tags":["x","y"]}"#);

    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "tags[2\t]: x\ty\n");
}

#[test]
fn encode_with_a_pipe_delimiter_declares_and_uses_pipes() {
    let outcome = encode(&["--delimiter", "pipe"], r#"{"tags":["x","y"]}"#);

    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "tags[2|]: x|y\n");
}

#[test]
fn encode_with_an_indent_of_four_nests_by_four_spaces() {
    let outcome = encode(&["--indent", "4"], r#"{"a":{"b":1}}"#);

    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "a:\n    b: 1\n");
}

#[test]
fn decode_with_an_indent_of_four_reads_four_space_nesting() {
    let outcome = decode(&["--indent", "4"], "a:\n    b: 1\n");

    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    assert_eq!(outcome.stdout, "{\"a\":{\"b\":1}}\n");
}

#[test]
fn an_indent_of_zero_is_refused() {
    let outcome = encode(&["--indent", "0"], "{}");

    assert_ne!(outcome.code, 0);
    assert!(outcome.stderr.contains("--indent"), "{}", outcome.stderr);
}

#[test]
fn decode_is_strict_about_array_counts_unless_lenient() {
    let document = "tags[3]: x,y\n";

    let strict = decode(&[], document);
    let lenient = decode(&["--lenient"], document);

    assert_eq!(strict.code, 1);
    assert!(
        strict.stderr.contains("invalid TOON at line 1"),
        "{}",
        strict.stderr
    );
    assert_eq!(lenient.code, 0, "{}", lenient.stderr);
    assert_eq!(lenient.stdout, "{\"tags\":[\"x\",\"y\"]}\n");
}

#[test]
fn bad_json_is_reported_with_its_line_and_column() {
    let outcome = encode(&[], "{\n  \"a\": 1,\n  \"b\": ]\n}");

    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.stdout, "");
    assert!(
        outcome
            .stderr
            .starts_with("ide-mcp: invalid JSON at line 3, column "),
        "{}",
        outcome.stderr
    );
}

#[test]
fn bad_toon_is_reported_with_its_line_and_column() {
    let outcome = decode(&[], "a: 1\nb: \"unterminated\n");

    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.stdout, "");
    assert!(
        outcome
            .stderr
            .starts_with("ide-mcp: invalid TOON at line 2, column "),
        "{}",
        outcome.stderr
    );
}

#[test]
fn duplicate_json_keys_are_refused() {
    let outcome = encode(&[], r#"{"a":1,"a":2}"#);

    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.stdout, "");
    assert!(
        outcome
            .stderr
            .starts_with("ide-mcp: invalid JSON at line 1, column "),
        "{}",
        outcome.stderr
    );
    assert!(outcome.stderr.contains("duplicate"), "{}", outcome.stderr);
}

#[test]
fn duplicate_toon_keys_are_refused_unless_lenient() {
    let lenient = decode(&["--lenient"], "a: 1\na: 2\n");
    assert_eq!(lenient.code, 0, "{}", lenient.stderr);
    assert_eq!(lenient.stdout, "{\"a\":2}\n");

    let outcome = decode(&[], "a: 1\na: 2\n");
    assert_eq!(outcome.code, 1);
    assert!(
        outcome
            .stderr
            .starts_with("ide-mcp: invalid TOON at line 2, column "),
        "{}",
        outcome.stderr
    );
}

#[test]
fn invalid_utf8_toon_is_refused() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ide-mcp"))
        .args(["toon", "decode"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"a: \xff\n").unwrap();
    let output = child.wait_with_output().unwrap();

    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid TOON at line 1"));
}
