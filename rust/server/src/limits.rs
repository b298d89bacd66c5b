//! Limits on the shape of a decoded message, checked in one pass without recursion, and a
//! size measure that stops counting once past a cap.

use serde_json::Value;

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
        // Room for a message's usual nesting without growing.
        let mut stack: Vec<(&Value, usize)> = Vec::with_capacity(16);
        stack.push((value, 1));
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
                    if members.len() > self.max_object_keys {
                        return Err(format!(
                            "an object has {} keys; the limit is {}",
                            members.len(),
                            self.max_object_keys
                        ));
                    }
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
}
