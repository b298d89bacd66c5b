//! Strict JSON parsing into [`serde_json::Value`].
//!
//! Stricter than `serde_json::from_slice` in one way that matters for security: an
//! object with a repeated key is rejected. `serde_json` keeps the last occurrence
//! silently, while other parsers keep the first; if a policy check and a tool handler
//! ever read the same bytes with different parsers they would see different arguments.
//! Rejecting duplicates removes the ambiguity.
//!
//! Nesting is capped at [`MAX_DEPTH`] so a hostile document cannot exhaust the stack;
//! invalid UTF-8 and lone surrogate escapes are rejected as `serde_json` rejects them.
//! What the value takes is counted while it is built and capped by a budget (see
//! [`crate::budget`]), so a dense document cannot expand into a huge value.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::budget::{decode_budget, over_budget, Budget, ENTRY_BYTES, NODE_BYTES};

pub mod split;

use split::{Named, Split};

/// The deepest nesting of arrays and objects accepted: a top-level container is at
/// depth 1. `serde_json` itself stops at 128, so the limit is enforced here first,
/// with an error that says what happened.
pub const MAX_DEPTH: usize = 100;

/// What kind of rule a document broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonErrorKind {
    /// Not JSON: bad syntax, invalid UTF-8, a lone surrogate, trailing characters,
    /// a number out of range.
    Syntax,
    /// The input ended before the document did.
    Eof,
    /// An object has the same key twice.
    DuplicateKey,
    /// Arrays and objects are nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// The value would take more bytes than the decode budget allows.
    TooLarge,
}

/// Why bytes were not accepted as JSON, with the position where it was noticed.
#[derive(Debug)]
pub struct JsonError {
    kind: JsonErrorKind,
    inner: serde_json::Error,
}

impl JsonError {
    /// What kind of rule was broken.
    pub fn kind(&self) -> JsonErrorKind {
        self.kind
    }

    /// The 1-based line where the problem was noticed.
    pub fn line(&self) -> usize {
        self.inner.line()
    }

    /// The 1-based column where the problem was noticed.
    pub fn column(&self) -> usize {
        self.inner.column()
    }
}

impl fmt::Display for JsonError {
    /// `serde_json`'s message, which already ends with "at line L column C".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.inner, f)
    }
}

impl std::error::Error for JsonError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.inner)
    }
}

/// Parses one JSON document, rejecting duplicate keys, nesting deeper than
/// [`MAX_DEPTH`] and a value that would take more than
/// [`decode_budget`]`(bytes.len())` bytes (16 × its size + 1 MiB). Whitespace around
/// the document is allowed; anything else after it is not.
pub fn parse_strict(bytes: &[u8]) -> Result<Value, JsonError> {
    parse_strict_within(bytes, decode_budget(bytes.len()))
}

/// [`parse_strict`] with a decode budget of `max_decoded_bytes` (`usize::MAX`: none).
pub fn parse_strict_within(bytes: &[u8], max_decoded_bytes: usize) -> Result<Value, JsonError> {
    parse_strict_with(bytes, max_decoded_bytes, AnyValue)
}

/// A document whose top level was read member by member (see [`parse_strict_picking`]).
#[derive(Debug, PartialEq)]
pub enum TopLevel<const N: usize> {
    /// The top level is an object: the members named, each in its slot (`None` when absent),
    /// and the others, keys and values as they came.
    Object {
        /// The named members, in the order of the names.
        named: [Option<Value>; N],
        /// Every other member.
        rest: Map<String, Value>,
    },
    /// The top level is not an object.
    Other(Value),
}

impl<const N: usize> TopLevel<N> {
    /// A parsed document taken apart as [`parse_strict_picking`] takes it, members moved, not
    /// copied (the other members are dropped: only the named ones are looked at again).
    pub fn from_value(value: Value, names: [&str; N]) -> Self {
        match value {
            Value::Object(members) => TopLevel::Object {
                named: take_members(members, names),
                rest: Map::new(),
            },
            other => TopLevel::Other(other),
        }
    }
}

/// [`parse_strict_within`] for a document whose top-level object is taken apart at once:
/// the members named by `names` land in their slots without a map being built for the
/// object (no key of theirs is copied or hashed), and only other members go into a map.
///
/// Every rule holds exactly as for [`parse_strict_within`], with the same errors at the same
/// positions: a repeated key (named or not), the nesting cap, the decode budget (each member
/// is charged as it would be in the object's map).
pub fn parse_strict_picking<const N: usize>(
    bytes: &[u8],
    max_decoded_bytes: usize,
    names: [&'static str; N],
) -> Result<TopLevel<N>, JsonError> {
    let split = parse_strict_with(bytes, max_decoded_bytes, split::SplitRoot(Named(names)))?;
    Ok(match split {
        Split::Object((named, rest)) => TopLevel::Object { named, rest },
        Split::Other(value) => TopLevel::Other(value),
    })
}

/// What the top level of a document is read as, given the strict seed of its root (see
/// [`parse_strict_with`]).
pub trait RootSeed {
    /// What the document becomes.
    type Output;

    /// Reads the document from `deserializer`, with `root` for the strict rules.
    fn read<'de, D: de::Deserializer<'de>>(
        self,
        root: StrictValue<'_>,
        deserializer: D,
    ) -> Result<Self::Output, D::Error>;
}

/// The whole document as one [`Value`].
struct AnyValue;

impl RootSeed for AnyValue {
    type Output = Value;

    fn read<'de, D: de::Deserializer<'de>>(
        self,
        root: StrictValue<'_>,
        deserializer: D,
    ) -> Result<Value, D::Error> {
        root.deserialize(deserializer)
    }
}

/// One strict parse of `bytes` whose top level `seed` reads: every rule of
/// [`parse_strict_within`] holds for whatever `seed` builds from the [`StrictValue`] it gets
/// (see [`split`] for taking objects apart as they are read).
#[inline]
pub fn parse_strict_with<S: RootSeed>(
    bytes: &[u8],
    max_decoded_bytes: usize,
    seed: S,
) -> Result<S::Output, JsonError> {
    let violation = Cell::new(None);
    let budget = Budget::new(max_decoded_bytes);
    let limit = Limit {
        budget: &budget,
        max_decoded_bytes,
        input_len: bytes.len(),
    };
    let members = RefCell::new(
        MEMBERS
            .try_with(Cell::take)
            .unwrap_or_else(|_| Vec::with_capacity(SMALL_OBJECT_MEMBERS)),
    );
    let root = StrictValue {
        depth: 0,
        violation: &violation,
        limit: &limit,
        members: &members,
    };
    // Text checked as UTF-8 once, in one pass over it, is read without checking each string
    // again (a message's dozen strings each cost a call and a pass of their own); bytes that
    // are not UTF-8 are read as bytes, for `serde_json`'s error and where it is.
    let result = match std::str::from_utf8(bytes) {
        Ok(text) => read_document(seed, root, serde_json::Deserializer::from_str(text)),
        Err(_) => read_document(seed, root, serde_json::Deserializer::from_slice(bytes)),
    };
    // A failed parse leaves members behind; the next one starts from an empty buffer.
    let mut members = members.into_inner();
    members.clear();
    if members.capacity() <= KEPT_MEMBERS {
        let _ = MEMBERS.try_with(|kept| kept.set(members));
    }
    result.map_err(|inner| {
        let kind = violation.get().unwrap_or(if inner.is_eof() {
            JsonErrorKind::Eof
        } else {
            JsonErrorKind::Syntax
        });
        JsonError { kind, inner }
    })
}

/// Reads the one document `deserializer` holds, and nothing after it but whitespace.
#[inline]
fn read_document<'de, S: RootSeed, R: serde_json::de::Read<'de>>(
    seed: S,
    root: StrictValue<'_>,
    mut deserializer: serde_json::Deserializer<R>,
) -> Result<S::Output, serde_json::Error> {
    let document = seed.read(root, &mut deserializer)?;
    deserializer.end()?;
    Ok(document)
}

/// Takes the members named `names` out of `object`, consuming it: `[Some(value)]` for each
/// name present, `None` for each absent one.
///
/// One pass over the members with plain comparisons, no hashing: for the few members a
/// message envelope or a parameter object has, cheaper than a lookup per name, and never
/// more than one look at each member of a large object.
pub fn take_members<const N: usize>(
    object: Map<String, Value>,
    names: [&str; N],
) -> [Option<Value>; N] {
    let mut taken = [const { None }; N];
    let mut left = N;
    for (key, value) in object {
        if let Some(index) = names.iter().position(|name| *name == key) {
            taken[index] = Some(value);
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    taken
}

/// How many bytes of `bytes` come before the first that ends a JSON string's plain run (its
/// closing quote, a backslash or a control character), `None` when none does: for a reader
/// that takes strings without escapes as they are. Eight bytes a word, where a byte at a
/// time cost about ten instructions a byte.
#[inline]
pub fn plain_run_length(bytes: &[u8]) -> Option<usize> {
    crate::toon::byte_search::find_json_run_end(bytes)
}

/// Serialises a value as compact JSON bytes.
pub fn to_vec(value: &Value) -> Vec<u8> {
    // A `Value` always has string keys and finite numbers, the only things that can
    // make serialisation into memory fail.
    serde_json::to_vec(value).expect("a serde_json::Value always serialises")
}

/// Serialises a value as a compact JSON string.
pub fn to_string(value: &Value) -> String {
    value.to_string()
}

/// A seed that builds a [`Value`] while enforcing the strict rules; one is handed to a
/// [`RootSeed`] for the document's root, and [`StrictValue::read_members`] hands one to each
/// member of an object taken apart.
///
/// The rule that failed is recorded in `violation`, because the error that travels
/// back through `serde_json` is a plain custom error with the position attached.
#[derive(Clone, Copy)]
pub struct StrictValue<'a> {
    /// How many containers enclose the value about to be read.
    depth: usize,
    violation: &'a Cell<Option<JsonErrorKind>>,
    limit: &'a Limit<'a>,
    /// The members of the small objects being read, innermost last: one buffer for the whole
    /// document, so an object's map is made once at its exact size when it closes, instead
    /// of growing (and rehashing) member by member.
    members: &'a RefCell<Vec<(String, Value)>>,
}

impl fmt::Debug for StrictValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StrictValue")
            .field("depth", &self.depth)
            .finish_non_exhaustive()
    }
}

/// The most members an object collects in the shared buffer, where a repeated key is found
/// by comparing it with each earlier one; past this, the object becomes a map at once and
/// finds repeats by lookup, so a huge object costs no quadratic search.
const SMALL_OBJECT_MEMBERS: usize = 16;

/// A members buffer that grew past this for one large document is freed rather than kept.
const KEPT_MEMBERS: usize = 4 * SMALL_OBJECT_MEMBERS;

thread_local! {
    /// The members buffer, kept per thread from one document to the next: made afresh, its
    /// room for a message's members was a block past the allocator's small sizes, the most
    /// expensive kind to get, for every message. It starts with room for a message's objects
    /// at once, so it does not grow; taken (left empty) while a parse runs.
    static MEMBERS: Cell<Vec<(String, Value)>> =
        Cell::new(Vec::with_capacity(SMALL_OBJECT_MEMBERS));
}

/// The decode budget of one document.
struct Limit<'a> {
    budget: &'a Budget,
    max_decoded_bytes: usize,
    input_len: usize,
}

impl StrictValue<'_> {
    /// The seed for a member of the container being visited.
    fn nested<E: de::Error>(self) -> Result<Self, E> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            self.violation.set(Some(JsonErrorKind::TooDeep));
            return Err(E::custom(format_args!(
                "nesting deeper than {MAX_DEPTH} levels"
            )));
        }
        Ok(Self { depth, ..self })
    }

    /// Takes `bytes` from the budget, or fails once it is spent.
    #[inline]
    fn charge<E: de::Error>(self, bytes: usize) -> Result<(), E> {
        if self.limit.budget.take(bytes) {
            return Ok(());
        }
        self.violation.set(Some(JsonErrorKind::TooLarge));
        Err(E::custom(over_budget(
            self.limit.max_decoded_bytes,
            self.limit.input_len,
        )))
    }
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        // JSON text cannot spell NaN or infinity and `serde_json` rejects overflowing
        // literals, so this only guards against a future change there.
        Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("number is not finite"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.charge(v.len())?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.charge(v.len())?;
        Ok(Value::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let member = self.nested()?;
        let mut items: Vec<Value> = Vec::new();
        while let Some(item) = seq.next_element_seed(member)? {
            // The vector grows by doubling, and what it reserves is what is charged.
            if items.len() == items.capacity() {
                let more = items.capacity().max(4);
                self.charge(more * NODE_BYTES)?;
                items.reserve_exact(more);
            }
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let member = self.nested()?;
        let start = self.members.borrow().len();
        loop {
            let Some(key) = map.next_key::<String>()? else {
                let object: Map<String, Value> = self.members.borrow_mut().drain(start..).collect();
                return Ok(Value::Object(object));
            };
            self.charge(ENTRY_BYTES + key.len())?;
            if self.members.borrow()[start..]
                .iter()
                .any(|(earlier, _)| *earlier == key)
            {
                return Err(self.duplicate_key(&key));
            }
            // A nested object uses the buffer past this object's members and leaves it as it
            // found it.
            let value = map.next_value_seed(member)?;
            let mut members = self.members.borrow_mut();
            members.push((key, value));
            if members.len() - start == SMALL_OBJECT_MEMBERS {
                let object = members.drain(start..).collect();
                drop(members);
                return self.visit_large_map(map, member, object);
            }
        }
    }
}

impl StrictValue<'_> {
    /// The rest of an object past [`SMALL_OBJECT_MEMBERS`], member by member into its map;
    /// `member` is the seed of its members' values.
    fn visit_large_map<'de, A: MapAccess<'de>>(
        self,
        mut map: A,
        member: Self,
        mut object: Map<String, Value>,
    ) -> Result<Value, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            self.charge(ENTRY_BYTES + key.len())?;
            // One lookup per key: the vacant entry keeps the key's hash for the insert.
            match object.entry(key) {
                Entry::Occupied(taken) => return Err(self.duplicate_key(taken.key())),
                Entry::Vacant(place) => {
                    place.insert(map.next_value_seed(member)?);
                }
            }
        }
        Ok(Value::Object(object))
    }

    fn duplicate_key<E: de::Error>(self, key: &str) -> E {
        self.violation.set(Some(JsonErrorKind::DuplicateKey));
        E::custom(format_args!("duplicate key `{key}`"))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kind(input: &[u8]) -> JsonErrorKind {
        parse_strict(input).unwrap_err().kind()
    }

    fn nested(depth: usize) -> String {
        "[".repeat(depth) + &"]".repeat(depth)
    }

    #[test]
    fn parses_ordinary_documents_like_serde_json() {
        let input = br#"{"b":[1,-2,3.5,"x",true,null,{}],"a":{"c":18446744073709551615}}"#;
        let strict = parse_strict(input).unwrap();
        let loose: Value = serde_json::from_slice(input).unwrap();
        assert_eq!(strict, loose);
    }

    #[test]
    fn take_members_takes_what_is_named_and_nothing_else() {
        let object = json!({"b": 2, "x": [1], "a": 1})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            take_members(object, ["a", "missing", "b"]),
            [Some(json!(1)), None, Some(json!(2))]
        );
        assert_eq!(take_members(Map::new(), ["a"]), [None]);
    }

    #[test]
    fn keeps_member_order() {
        let value = parse_strict(br#"{"z":1,"a":2,"m":3}"#).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn scalars_at_top_level_are_accepted() {
        assert_eq!(parse_strict(b" 42 ").unwrap(), json!(42));
        assert_eq!(parse_strict(b"\"s\"").unwrap(), json!("s"));
        assert_eq!(parse_strict(b"null").unwrap(), Value::Null);
    }

    #[test]
    fn duplicate_key_at_top_level_is_rejected() {
        assert_eq!(kind(br#"{"a":1,"a":2}"#), JsonErrorKind::DuplicateKey);
    }

    /// An object of `members` members `k0…`, each holding a small object, in JSON text.
    fn object_of(members: usize, repeat: Option<usize>) -> String {
        let body: Vec<String> = (0..members)
            .map(|index| {
                let key = match repeat {
                    Some(repeated) if index == members - 1 => repeated,
                    _ => index,
                };
                format!(r#""k{key}":{{"inner{index}":[{index},{{"x":{index}}}],"y":null}}"#)
            })
            .collect();
        format!("{{{}}}", body.join(","))
    }

    #[test]
    fn objects_of_every_size_parse_like_serde_json_around_the_small_object_bound() {
        for members in 0..=2 * SMALL_OBJECT_MEMBERS + 1 {
            let text = format!(
                r#"{{"outer":{},"after":{}}}"#,
                object_of(members, None),
                members
            );
            let strict = parse_strict(text.as_bytes()).unwrap();
            let loose: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(strict, loose, "{members} members");
            let keys: Vec<&String> = strict["outer"].as_object().unwrap().keys().collect();
            let expected: Vec<String> = (0..members).map(|index| format!("k{index}")).collect();
            assert_eq!(
                keys,
                expected.iter().collect::<Vec<_>>(),
                "{members} members keep their order"
            );
        }
    }

    #[test]
    fn a_repeated_key_is_found_in_small_and_in_large_objects() {
        for members in 2..=2 * SMALL_OBJECT_MEMBERS + 1 {
            for repeated in [0, (members - 1) / 2, members - 2] {
                let text = object_of(members, Some(repeated));
                let error = parse_strict(text.as_bytes()).unwrap_err();
                assert_eq!(
                    error.kind(),
                    JsonErrorKind::DuplicateKey,
                    "{members} members"
                );
                assert!(
                    error
                        .to_string()
                        .contains(&format!("duplicate key `k{repeated}`")),
                    "{error}"
                );
            }
        }
    }

    #[test]
    fn duplicate_key_deep_inside_is_rejected() {
        let input = br#"{"x":[{"y":{"ok":1}},{"y":{"dup":1,"other":2,"dup":3}}]}"#;
        let err = parse_strict(input).unwrap_err();
        assert_eq!(err.kind(), JsonErrorKind::DuplicateKey);
        assert!(err.to_string().contains("duplicate key `dup`"), "{err}");
    }

    #[test]
    fn duplicate_key_spelled_with_an_escape_is_rejected() {
        assert_eq!(kind(br#"{"a":1,"\u0061":2}"#), JsonErrorKind::DuplicateKey);
    }

    #[test]
    fn same_key_in_sibling_objects_is_fine() {
        assert!(parse_strict(br#"[{"a":1},{"a":2}]"#).is_ok());
    }

    #[test]
    fn duplicate_key_error_has_line_and_column() {
        let err = parse_strict(b"{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
        assert_eq!(err.line(), 3);
        assert!(err.column() > 0);
        assert!(err.to_string().contains("line 3 column"), "{err}");
    }

    #[test]
    fn nesting_at_the_limit_is_accepted() {
        assert!(parse_strict(nested(MAX_DEPTH).as_bytes()).is_ok());
        let objects = "{\"a\":".repeat(MAX_DEPTH - 1) + "{}" + &"}".repeat(MAX_DEPTH - 1);
        assert!(parse_strict(objects.as_bytes()).is_ok());
    }

    #[test]
    fn nesting_past_the_limit_is_rejected() {
        assert_eq!(
            kind(nested(MAX_DEPTH + 1).as_bytes()),
            JsonErrorKind::TooDeep
        );
    }

    #[test]
    fn nesting_ten_thousand_deep_is_rejected_without_crashing() {
        assert_eq!(kind(nested(10_000).as_bytes()), JsonErrorKind::TooDeep);
        let unclosed = "{\"a\":".repeat(10_000);
        assert_eq!(kind(unclosed.as_bytes()), JsonErrorKind::TooDeep);
    }

    #[test]
    fn invalid_utf8_in_a_string_is_rejected() {
        assert_eq!(kind(b"\"\xff\""), JsonErrorKind::Syntax);
        assert_eq!(kind(b"{\"k\xc3\":1}"), JsonErrorKind::Syntax);
    }

    #[test]
    fn invalid_utf8_outside_strings_is_rejected() {
        assert_eq!(kind(b"[1,\xe2\x80\xa8]"), JsonErrorKind::Syntax);
    }

    #[test]
    fn lone_surrogate_escape_is_rejected() {
        assert_eq!(kind(br#""\ud800""#), JsonErrorKind::Syntax);
        assert_eq!(kind(br#"{"\udc00":1}"#), JsonErrorKind::Syntax);
    }

    #[test]
    fn surrogate_pair_escape_is_accepted() {
        assert_eq!(parse_strict(br#""\ud83d\ude00""#).unwrap(), json!("😀"));
    }

    #[test]
    fn trailing_characters_are_rejected() {
        assert_eq!(kind(b"{} {}"), JsonErrorKind::Syntax);
    }

    #[test]
    fn truncated_document_is_eof() {
        assert_eq!(kind(br#"{"a":[1,"#), JsonErrorKind::Eof);
        assert_eq!(kind(b""), JsonErrorKind::Eof);
    }

    #[test]
    fn overflowing_number_is_rejected() {
        assert_eq!(kind(b"1e400"), JsonErrorKind::Syntax);
    }

    #[test]
    fn to_vec_is_compact_and_ordered() {
        let value = parse_strict(br#"{ "b" : 1 , "a" : [ ] }"#).unwrap();
        assert_eq!(to_vec(&value), br#"{"b":1,"a":[]}"#);
        assert_eq!(to_string(&value), r#"{"b":1,"a":[]}"#);
    }

    const NAMES: [&str; 3] = ["id", "method", "params"];

    /// What `parse_strict_picking` gives, said in the terms of the whole parse: the named
    /// members, the other members as an object, or the value; the error's kind, position and
    /// text.
    type Outcome = Result<(Vec<Option<Value>>, Value), (JsonErrorKind, usize, usize, String)>;

    fn error_of(error: JsonError) -> (JsonErrorKind, usize, usize, String) {
        (
            error.kind(),
            error.line(),
            error.column(),
            error.to_string(),
        )
    }

    fn picked(input: &[u8], budget: usize) -> Outcome {
        match parse_strict_picking(input, budget, NAMES) {
            Ok(TopLevel::Object { named, rest }) => Ok((named.to_vec(), Value::Object(rest))),
            Ok(TopLevel::Other(value)) => Ok((Vec::new(), value)),
            Err(error) => Err(error_of(error)),
        }
    }

    fn whole(input: &[u8], budget: usize) -> Outcome {
        match parse_strict_within(input, budget) {
            Ok(Value::Object(mut members)) => {
                let named = NAMES
                    .iter()
                    .map(|name| members.shift_remove(*name))
                    .collect();
                Ok((named, Value::Object(members)))
            }
            Ok(value) => Ok((Vec::new(), value)),
            Err(error) => Err(error_of(error)),
        }
    }

    #[test]
    fn picking_the_top_level_apart_agrees_with_the_whole_parse() {
        let deep_enough = format!(r#"{{"params":{}}}"#, nested(MAX_DEPTH - 1));
        let too_deep = format!(r#"{{"x":{}}}"#, nested(MAX_DEPTH));
        let inputs: Vec<&[u8]> = vec![
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,2,{"b":null}]}}"#,
            br#"{"x":1,"id":"s","y":{"z":[true,false]},"method":"m"}"#,
            br#"{}"#,
            br#"{"id":1,"id":2}"#,
            br#"{"x":1,"y":2,"x":3}"#,
            br#"{"i\u0064":1,"id":2}"#,
            br#"{"id":1,"params":{"a":1,"a":2}}"#,
            br#"[1,2,{"id":1}]"#,
            br#""text""#,
            b"null",
            b"true",
            b"-1.5",
            b"18446744073709551615",
            br#"{"id":"#,
            br#"{"id":1} x"#,
            b"{\"id\":\"\xff\"}",
            b"{\"\xff\":1}",
            br#"{"id":1e400}"#,
            deep_enough.as_bytes(),
            too_deep.as_bytes(),
        ];
        for input in inputs {
            let shown = String::from_utf8_lossy(input);
            let expected = whole(input, decode_budget(input.len()));
            assert_eq!(
                picked(input, decode_budget(input.len())),
                expected,
                "{shown}"
            );
            // Every budget up to what the document takes: each member is charged as the
            // object's map would be charged for it, so the budget runs out at the same byte.
            for budget in 0..400 {
                assert_eq!(
                    picked(input, budget),
                    whole(input, budget),
                    "{shown} within {budget}"
                );
            }
        }
    }

    proptest::proptest! {
        /// Objects of keys drawn from the names, from other keys, and from names spelt with
        /// an escape, so repeats of every kind occur.
        #[test]
        fn picking_agrees_with_the_whole_parse_on_any_object(
            members in proptest::collection::vec(
                (
                    proptest::sample::select(vec!["id", "method", "params", "x", "y", "i\\u0064"]),
                    proptest::sample::select(vec!["1", "\"v\"", "[1,{\"a\":2}]", "{\"id\":3}", "null"]),
                ),
                0..8,
            ),
            budget in 0usize..300,
        ) {
            let body: Vec<String> = members
                .iter()
                .map(|(key, value)| format!("\"{key}\":{value}"))
                .collect();
            let input = format!("{{{}}}", body.join(","));
            proptest::prop_assert_eq!(picked(input.as_bytes(), budget), whole(input.as_bytes(), budget));
            let unlimited = usize::MAX;
            proptest::prop_assert_eq!(
                picked(input.as_bytes(), unlimited),
                whole(input.as_bytes(), unlimited)
            );
        }
    }
}
