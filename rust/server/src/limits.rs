//! Limits on the shape of a decoded message, checked in one pass without recursion, and a
//! size measure that stops counting once past a cap.

use ide_mcp_protocol::json::TopLevel;
use serde_json::{Map, Value};
use smallvec::SmallVec;

/// The values still to check, each with its depth: room for a message's usual nesting on
/// the stack; only a larger one allocates.
type Stack<'v> = SmallVec<[(&'v Value, usize); 16]>;

/// How big a decoded message may be, beyond the frame size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeLimits {
    /// The longest string (key or value), in bytes.
    pub max_string_bytes: usize,
    /// The most elements in one array.
    pub max_array_len: usize,
    /// The most keys in one object.
    pub max_object_keys: usize,
    /// The deepest nesting of arrays and objects.
    pub max_depth: usize,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_string_bytes: 16 * 1024 * 1024,
            max_array_len: 1_000_000,
            max_object_keys: 100_000,
            max_depth: 64,
        }
    }
}

impl DecodeLimits {
    /// Checks `value`; the error names the limit that was passed.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let mut stack = Stack::new();
        stack.push((value, 1));
        self.check_all(&mut stack)
    }

    /// Checks a document whose top level was taken apart by `names` as it was parsed
    /// ([`ide_mcp_protocol::json::parse_strict_picking`]) exactly as [`DecodeLimits::check`]
    /// checks the whole document: the top-level object's depth and keys, then every member.
    pub fn check_top_level<const N: usize>(
        &self,
        top_level: &TopLevel<N>,
        names: [&str; N],
    ) -> Result<(), String> {
        match top_level {
            TopLevel::Other(value) => self.check(value),
            TopLevel::Object { named, rest } => {
                self.check_object(1, named_members(names, named, rest), std::iter::empty())
            }
        }
    }

    /// Checks `value` as it would be checked `depth` containers deep.
    pub(crate) fn check_at(&self, value: &Value, depth: usize) -> Result<(), String> {
        let mut stack = Stack::new();
        stack.push((value, depth));
        self.check_all(&mut stack)
    }

    /// Checks an object `depth` deep that was taken apart as it was parsed: `members` (keys
    /// and values, each value checked whole one level deeper) and `more_keys`, the keys of
    /// members the caller took apart further (and checks itself, one level deeper).
    pub(crate) fn check_object<'v>(
        &self,
        depth: usize,
        members: impl Iterator<Item = (&'v str, &'v Value)> + Clone,
        more_keys: impl Iterator<Item = &'v str> + Clone,
    ) -> Result<(), String> {
        self.check_depth(depth)?;
        self.check_key_count(members.clone().count() + more_keys.clone().count())?;
        for key in more_keys {
            self.check_string(key)?;
        }
        let mut stack = Stack::new();
        for (key, member) in members {
            self.check_string(key)?;
            stack.push((member, depth + 1));
        }
        self.check_all(&mut stack)
    }

    /// Checks every value on `stack` (each with its depth) and all they hold.
    fn check_all<'v>(&self, stack: &mut Stack<'v>) -> Result<(), String> {
        while let Some((value, depth)) = stack.pop() {
            match value {
                Value::String(text) => self.check_string(text)?,
                Value::Array(items) => {
                    self.check_depth(depth)?;
                    if items.len() > self.max_array_len {
                        return Err(format!(
                            "an array has {} elements; the limit is {}",
                            items.len(),
                            self.max_array_len
                        ));
                    }
                    stack.extend(items.iter().map(|item| (item, depth + 1)));
                }
                Value::Object(members) => {
                    self.check_depth(depth)?;
                    self.check_key_count(members.len())?;
                    for (key, member) in members {
                        self.check_string(key)?;
                        stack.push((member, depth + 1));
                    }
                }
                Value::Null | Value::Bool(_) | Value::Number(_) => {}
            }
        }
        Ok(())
    }

    fn check_key_count(&self, keys: usize) -> Result<(), String> {
        if keys > self.max_object_keys {
            return Err(format!(
                "an object has {keys} keys; the limit is {}",
                self.max_object_keys
            ));
        }
        Ok(())
    }

    fn check_string(&self, text: &str) -> Result<(), String> {
        if text.len() > self.max_string_bytes {
            return Err(format!(
                "a string is {} bytes; the limit is {}",
                text.len(),
                self.max_string_bytes
            ));
        }
        Ok(())
    }

    fn check_depth(&self, depth: usize) -> Result<(), String> {
        if depth > self.max_depth {
            return Err(format!("nesting is deeper than {}", self.max_depth));
        }
        Ok(())
    }
}

/// The members of an object taken apart: those named (the ones present), then the others.
pub(crate) fn named_members<'v, const N: usize>(
    names: [&'v str; N],
    named: &'v [Option<Value>; N],
    rest: &'v Map<String, Value>,
) -> impl Iterator<Item = (&'v str, &'v Value)> + Clone {
    names
        .into_iter()
        .zip(named)
        .filter_map(|(name, member)| Some((name, member.as_ref()?)))
        .chain(rest.iter().map(|(key, member)| (key.as_str(), member)))
}

/// Whether `value` as compact JSON takes at most `cap` bytes.
///
/// A bound of its size is added up first, without writing anything: for the small values most
/// calls take and return, it settles the question at a fraction of the cost of measuring the
/// JSON text, which [`json_size_within`] does when the bound is over the cap (or the value is
/// nested too deep to bound).
pub fn json_within(value: &Value, cap: usize) -> bool {
    match json_size_bound(value, BOUND_DEPTH) {
        Some(bound) if bound <= cap => true,
        _ => json_size_within(value, cap).is_some(),
    }
}

/// How deep [`json_size_bound`] goes before it gives up (its recursion stays shallow).
const BOUND_DEPTH: usize = 16;

/// At least as many bytes as `value` takes as compact JSON: every character of a string
/// escaped at its longest (`\u00XX`), every number at its longest (`f64` and 64-bit integers
/// take at most 24 characters), one separator per element and member. `None` past `depth_left`
/// levels of nesting.
fn json_size_bound(value: &Value, depth_left: usize) -> Option<usize> {
    fn string(text: &str) -> usize {
        text.len().saturating_mul(6).saturating_add(2)
    }
    Some(match value {
        Value::Null => 4,
        Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(text) => string(text),
        Value::Array(items) => {
            let inner = depth_left.checked_sub(1)?;
            let mut bound = items.len().saturating_add(2);
            for item in items {
                bound = bound.saturating_add(json_size_bound(item, inner)?);
            }
            bound
        }
        Value::Object(members) => {
            let inner = depth_left.checked_sub(1)?;
            let mut bound = members.len().saturating_mul(2).saturating_add(2);
            for (key, member) in members {
                bound = bound
                    .saturating_add(string(key))
                    .saturating_add(json_size_bound(member, inner)?);
            }
            bound
        }
    })
}

/// The size of `value` as compact JSON, or `None` once it passes `cap` (so a huge value is
/// not measured to the end).
pub fn json_size_within(value: &Value, cap: usize) -> Option<usize> {
    struct Counter {
        written: usize,
        cap: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.written += bytes.len();
            if self.written > self.cap {
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { written: 0, cap };
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.written)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_size_bound_is_never_below_the_size_and_the_check_agrees_with_measuring() {
        let long_digits: Value = serde_json::from_str("1.0000000000000000000000000000001").unwrap();
        let values = [
            json!(null),
            json!(true),
            json!(-9_223_372_036_854_775_808i64),
            json!(18_446_744_073_709_551_615u64),
            json!(-2.2250738585072014e-308),
            json!(1.7976931348623157e308),
            long_digits,
            json!("\u{1}\u{1f}\"\\\n é 😀"),
            json!({"a": [1, "x", {"b": null}], "\u{0}": "\u{7f}"}),
            json!([[], {}, [[[]]], ""]),
        ];
        for value in values {
            let size = serde_json::to_string(&value).unwrap().len();
            let bound = json_size_bound(&value, BOUND_DEPTH).unwrap();
            assert!(bound >= size, "{value}: bound {bound} < size {size}");
            for cap in [0, size - 1, size, size + 1, bound] {
                assert_eq!(
                    json_within(&value, cap),
                    size <= cap,
                    "{value} within {cap}"
                );
            }
        }
        // Too deep to bound: measured instead.
        let mut deep = json!(1);
        for _ in 0..BOUND_DEPTH + 4 {
            deep = json!([deep]);
        }
        assert_eq!(json_size_bound(&deep, BOUND_DEPTH), None);
        let size = serde_json::to_string(&deep).unwrap().len();
        assert!(json_within(&deep, size) && !json_within(&deep, size - 1));
    }

    fn small() -> DecodeLimits {
        DecodeLimits {
            max_string_bytes: 4,
            max_array_len: 3,
            max_object_keys: 2,
            max_depth: 3,
        }
    }

    #[test]
    fn a_value_within_limits_passes() {
        assert!(small().check(&json!({"a": [1, 2, "abcd"]})).is_ok());
    }

    #[test]
    fn each_limit_is_named_when_passed() {
        let limits = small();
        assert!(limits
            .check(&json!("abcde"))
            .unwrap_err()
            .contains("string"));
        assert!(limits
            .check(&json!({"abcde": 1}))
            .unwrap_err()
            .contains("string"));
        assert!(limits
            .check(&json!([1, 2, 3, 4]))
            .unwrap_err()
            .contains("array"));
        assert!(limits
            .check(&json!({"a": 1, "b": 2, "c": 3}))
            .unwrap_err()
            .contains("keys"));
        assert!(limits
            .check(&json!([[[[1]]]]))
            .unwrap_err()
            .contains("deeper"));
    }

    #[test]
    fn the_size_measure_stops_at_the_cap() {
        assert_eq!(json_size_within(&json!({"a": 1}), 100), Some(7));
        assert_eq!(json_size_within(&json!("x".repeat(200)), 100), None);
    }

    #[test]
    fn a_top_level_taken_apart_is_checked_as_the_whole_message() {
        use ide_mcp_protocol::json::{parse_strict, parse_strict_picking};
        const NAMES: [&str; 2] = ["id", "params"];
        let tight = DecodeLimits {
            max_string_bytes: 6,
            max_array_len: 2,
            max_object_keys: 3,
            max_depth: 3,
        };
        // Each message breaks at most one limit, so both checks name the same one.
        let messages = [
            r#"{"id":1,"params":{"a":[1,2]}}"#,
            r#"{"id":1,"params":[1,2,3]}"#,
            r#"{"id":"seven!!","params":{}}"#,
            r#"{"id":1,"params":{"toolong":1}}"#,
            r#"{"longest":1}"#,
            r#"{"id":1,"x":2,"y":3,"z":4}"#,
            r#"{"id":1,"x":2,"params":3}"#,
            r#"{"params":{"a":{"b":[]}}}"#,
            r#"{"params":{"a":{"b":{}}}}"#,
            r#"[[[[1]]]]"#,
            r#""long string""#,
        ];
        for limits in [tight, DecodeLimits::default()] {
            for message in messages {
                let whole = limits.check(&parse_strict(message.as_bytes()).unwrap());
                let top_level =
                    parse_strict_picking(message.as_bytes(), usize::MAX, NAMES).unwrap();
                assert_eq!(
                    limits.check_top_level(&top_level, NAMES),
                    whole,
                    "{message} within {limits:?}"
                );
            }
        }
        // A name that itself breaks the key limit is caught too.
        let short_keys = DecodeLimits {
            max_string_bytes: 1,
            ..DecodeLimits::default()
        };
        let top_level = parse_strict_picking(br#"{"id":1}"#, usize::MAX, NAMES).unwrap();
        assert!(short_keys.check_top_level(&top_level, NAMES).is_err());
    }
}
