//! The JSON-RPC 2.0 message model.
//!
//! Incoming messages are classified from an already parsed [`Value`] (see
//! [`crate::json::parse_strict`]) by [`IncomingMessage::from_value`]. Anything that is
//! not a valid request, notification or response becomes an [`InvalidMessage`] that
//! keeps the id when one could be read, so the reply `-32600 Invalid Request` can name
//! the request it answers. Outgoing messages serialise with their members in the
//! conventional order: `jsonrpc`, `id`, then `method`/`params` or `result`/`error`.
//!
//! Members the specification does not define are ignored, as it does not forbid them.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json;

/// The members of a message object that JSON-RPC defines, in the order
/// [`IncomingMessage::from_top_level`] takes them; any others are ignored.
pub const ENVELOPE_MEMBERS: [&str; 6] = ["id", "jsonrpc", "method", "params", "result", "error"];

/// The only protocol version accepted and emitted.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, kept exactly.
///
/// Integers are held as `i64` where they fit and as `u64` above that, so every integer
/// JSON can carry in 64 bits round-trips unchanged. `null`, fractions, booleans,
/// arrays and objects are not ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Id {
    /// A string id.
    String(String),
    /// An integer id that fits in `i64`.
    Int(i64),
    /// An integer id above `i64::MAX`. Never holds a value that fits in `i64`, so
    /// that equal numbers are equal ids.
    UInt(u64),
}

impl Id {
    /// Reads an id from a JSON value; `None` if the value cannot be an id.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) => n
                .as_i64()
                .map(Self::Int)
                .or_else(|| n.as_u64().map(Self::UInt)),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::String(s) => Value::String(s.clone()),
            Self::Int(n) => Value::from(*n),
            Self::UInt(n) => Value::from(*n),
        }
    }
}

impl From<&str> for Id {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<i64> for Id {
    fn from(n: i64) -> Self {
        Self::Int(n)
    }
}

impl From<u64> for Id {
    /// Normalises to [`Id::Int`] when the value fits, keeping equality exact.
    fn from(n: u64) -> Self {
        i64::try_from(n).map_or(Self::UInt(n), Self::Int)
    }
}

impl fmt::Display for Id {
    /// The id as it appears in JSON: strings quoted, numbers bare.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => write!(f, "{}", Value::String(s.clone())),
            Self::Int(n) => write!(f, "{n}"),
            Self::UInt(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(s) => serializer.serialize_str(s),
            Self::Int(n) => serializer.serialize_i64(*n),
            Self::UInt(n) => serializer.serialize_u64(*n),
        }
    }
}

/// A JSON-RPC error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// The bytes were not valid JSON.
    pub const PARSE_ERROR: Self = Self(-32700);
    /// The JSON was not a valid request object.
    pub const INVALID_REQUEST: Self = Self(-32600);
    /// No such method.
    pub const METHOD_NOT_FOUND: Self = Self(-32601);
    /// The method exists but its parameters are wrong.
    pub const INVALID_PARAMS: Self = Self(-32602);
    /// The server failed while handling a valid request.
    pub const INTERNAL_ERROR: Self = Self(-32603);
    /// The client asked for a protocol version this server does not speak.
    pub const UNSUPPORTED_PROTOCOL_VERSION: Self = Self(-32022);
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorObject {
    /// What kind of error.
    pub code: ErrorCode,
    /// A short human-readable description.
    pub message: String,
    /// Optional structured detail.
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with the given code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` attached.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700 Parse error`: the bytes were not JSON.
    pub fn parse_error() -> Self {
        Self::new(ErrorCode::PARSE_ERROR, "Parse error")
    }

    /// `-32600 Invalid Request`, saying what was wrong.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_REQUEST,
            format!("Invalid Request: {detail}"),
        )
    }

    /// `-32601 Method not found`, naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32602 Invalid params`, saying what was wrong.
    pub fn invalid_params(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params: {detail}"),
        )
    }

    /// `-32603 Internal error`, saying what failed.
    pub fn internal_error(detail: impl fmt::Display) -> Self {
        Self::new(
            ErrorCode::INTERNAL_ERROR,
            format!("Internal error: {detail}"),
        )
    }

    /// `-32022 Unsupported protocol version`, with the requested and supported
    /// versions in `data` so the client can pick one.
    pub fn unsupported_protocol_version(requested: &str, supported: &[&str]) -> Self {
        let mut data = Map::new();
        data.insert("requested".into(), Value::from(requested));
        data.insert("supported".into(), Value::from(supported.to_vec()));
        Self::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(Value::Object(data))
    }

    /// Reads an error object from a response's `error` member.
    fn from_value(value: Value) -> Result<Self, &'static str> {
        let Value::Object(mut members) = value else {
            return Err("error must be an object");
        };
        let code = members
            .get("code")
            .and_then(Value::as_i64)
            .ok_or("error.code must be an integer")?;
        let Some(Value::String(message)) = members.remove("message") else {
            return Err("error.message must be a string");
        };
        Ok(Self {
            code: ErrorCode(code),
            message,
            data: members.remove("data"),
        })
    }

    /// The error object as JSON: `code`, `message`, then `data` if any.
    pub fn into_value(self) -> Value {
        let mut members = Map::new();
        members.insert("code".into(), Value::from(self.code.0));
        members.insert("message".into(), Value::String(self.message));
        if let Some(data) = self.data {
            members.insert("data".into(), data);
        }
        Value::Object(members)
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

/// A call that expects a response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Echoed in the response.
    pub id: Id,
    /// The method to call.
    pub method: String,
    /// An object or array, if given.
    pub params: Option<Value>,
}

impl Request {
    /// The message as JSON, members in the order `jsonrpc`, `id`, `method`, `params`.
    pub fn into_value(self) -> Value {
        let mut members = envelope();
        members.insert("id".into(), self.id.to_value());
        members.insert("method".into(), Value::String(self.method));
        if let Some(params) = self.params {
            members.insert("params".into(), params);
        }
        Value::Object(members)
    }

    /// `params._meta`, if present and an object.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.params.as_ref().and_then(params_meta)
    }
}

/// A call that expects no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method to call.
    pub method: String,
    /// An object or array, if given.
    pub params: Option<Value>,
}

impl Notification {
    /// The message as JSON, members in the order `jsonrpc`, `method`, `params`.
    pub fn into_value(self) -> Value {
        let mut members = envelope();
        members.insert("method".into(), Value::String(self.method));
        if let Some(params) = self.params {
            members.insert("params".into(), params);
        }
        Value::Object(members)
    }

    /// `params._meta`, if present and an object.
    pub fn meta(&self) -> Option<&Map<String, Value>> {
        self.params.as_ref().and_then(params_meta)
    }
}

/// The answer to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// The request succeeded.
    Success {
        /// The id of the request answered.
        id: Id,
        /// Whatever the method returned.
        result: Value,
    },
    /// The request failed.
    Error {
        /// The id of the request answered, or `None` (serialised as `null`) when
        /// the request was too broken for its id to be read.
        id: Option<Id>,
        /// What went wrong.
        error: ErrorObject,
    },
}

impl Response {
    /// A success response.
    pub fn success(id: Id, result: Value) -> Self {
        Self::Success { id, result }
    }

    /// An error response; `id` is `None` only when the request's id is unknown.
    pub fn error(id: Option<Id>, error: ErrorObject) -> Self {
        Self::Error { id, error }
    }

    /// The id of the request answered, if known.
    pub fn id(&self) -> Option<&Id> {
        match self {
            Self::Success { id, .. } => Some(id),
            Self::Error { id, .. } => id.as_ref(),
        }
    }

    /// The message as JSON, members in the order `jsonrpc`, `id`, `result`/`error`.
    pub fn into_value(self) -> Value {
        let mut members = envelope();
        match self {
            Self::Success { id, result } => {
                members.insert("id".into(), id.to_value());
                members.insert("result".into(), result);
            }
            Self::Error { id, error } => {
                members.insert("id".into(), id.as_ref().map_or(Value::Null, Id::to_value));
                members.insert("error".into(), error.into_value());
            }
        }
        Value::Object(members)
    }
}

/// Any valid message a peer may send.
#[derive(Debug, Clone, PartialEq)]
pub enum IncomingMessage {
    /// A call expecting a response.
    Request(Request),
    /// A call expecting none.
    Notification(Notification),
    /// An answer to a call this side made.
    Response(Response),
}

/// A message that is JSON but not valid JSON-RPC 2.0.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid JSON-RPC message: {reason}")]
pub struct InvalidMessage {
    /// The message's id, if it had a readable one: the error reply should carry it
    /// (and carries `null` otherwise).
    pub id: Option<Id>,
    /// What was wrong, in a few words.
    pub reason: &'static str,
}

impl InvalidMessage {
    /// The `-32600 Invalid Request` reply to this message.
    pub fn to_response(&self) -> Response {
        Response::error(self.id.clone(), ErrorObject::invalid_request(self.reason))
    }
}

impl IncomingMessage {
    /// Classifies a parsed message.
    ///
    /// A message with `method` is a request if it has an `id` member and a
    /// notification if not; one without `method` is a response. A batch (a JSON
    /// array) is not supported and is reported as invalid.
    pub fn from_value(value: Value) -> Result<Self, InvalidMessage> {
        Self::from_top_level(json::TopLevel::from_value(value, ENVELOPE_MEMBERS))
    }

    /// [`IncomingMessage::from_value`] for a message whose top level was taken apart by
    /// [`ENVELOPE_MEMBERS`] as it was parsed ([`json::parse_strict_picking`]): the same
    /// classification, without the object's map ever being built.
    pub fn from_top_level(
        top_level: json::TopLevel<{ ENVELOPE_MEMBERS.len() }>,
    ) -> Result<Self, InvalidMessage> {
        let [id_member, version, method, params, result, error] = match top_level {
            json::TopLevel::Object { named, .. } => named,
            json::TopLevel::Other(Value::Array(_)) => {
                return Err(invalid(None, "batch requests are not supported"))
            }
            json::TopLevel::Other(_) => return Err(invalid(None, "message must be a JSON object")),
        };
        // Read the id before anything else can fail, so every later error can cite it.
        let id = id_member.as_ref().and_then(Id::from_value);
        if version.as_ref().and_then(Value::as_str) != Some(JSONRPC_VERSION) {
            return Err(invalid(id, "jsonrpc must be \"2.0\""));
        }
        match method {
            Some(Value::String(method)) => {
                let params = match params {
                    None => None,
                    Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
                    Some(_) => return Err(invalid(id, "params must be an object or an array")),
                };
                match (id_member, id) {
                    (None, _) => Ok(Self::Notification(Notification { method, params })),
                    (Some(_), Some(id)) => Ok(Self::Request(Request { id, method, params })),
                    (Some(_), None) => Err(invalid(None, "id must be a string or an integer")),
                }
            }
            Some(_) => Err(invalid(id, "method must be a string")),
            None => response_from_members(result, error, id_member, id).map(Self::Response),
        }
    }
}

/// Reads a response from its `result` and `error` members.
fn response_from_members(
    result: Option<Value>,
    error: Option<Value>,
    id_member: Option<Value>,
    id: Option<Id>,
) -> Result<Response, InvalidMessage> {
    match (result, error) {
        (Some(result), None) => match id {
            Some(id) => Ok(Response::Success { id, result }),
            None => Err(invalid(None, "id must be a string or an integer")),
        },
        (None, Some(error)) => {
            let error =
                ErrorObject::from_value(error).map_err(|reason| invalid(id.clone(), reason))?;
            match (id_member, id) {
                (Some(Value::Null), _) => Ok(Response::Error { id: None, error }),
                (Some(_), Some(id)) => Ok(Response::Error {
                    id: Some(id),
                    error,
                }),
                (None, _) => Err(invalid(None, "response must have an id")),
                (Some(_), None) => Err(invalid(None, "id must be a string, an integer or null")),
            }
        }
        (Some(_), Some(_)) => Err(invalid(id, "response must not have both result and error")),
        (None, None) => Err(invalid(id, "message must have method, result or error")),
    }
}

fn invalid(id: Option<Id>, reason: &'static str) -> InvalidMessage {
    InvalidMessage { id, reason }
}

/// A fresh member map holding `"jsonrpc": "2.0"`, which every message starts with.
fn envelope() -> Map<String, Value> {
    // `jsonrpc`, `id` and one of `method`/`params`, `result` or `error`: sized once.
    let mut members = Map::with_capacity(4);
    members.insert("jsonrpc".into(), Value::from(JSONRPC_VERSION));
    members
}

/// `params._meta`, if `params` is an object whose `_meta` member is an object.
pub fn params_meta(params: &Value) -> Option<&Map<String, Value>> {
    params.get("_meta").and_then(Value::as_object)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn classify(value: Value) -> Result<IncomingMessage, InvalidMessage> {
        IncomingMessage::from_value(value)
    }

    fn request(value: Value) -> Request {
        match classify(value).unwrap() {
            IncomingMessage::Request(r) => r,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    fn rejected(value: Value) -> InvalidMessage {
        classify(value).unwrap_err()
    }

    #[test]
    fn valid_request_is_classified_with_all_fields() {
        let r = request(json!({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}));
        assert_eq!(r.id, Id::Int(7));
        assert_eq!(r.method, "tools/list");
        assert_eq!(r.params, Some(json!({"a":1})));
    }

    #[test]
    fn request_without_params_has_none() {
        let r = request(json!({"jsonrpc":"2.0","id":"x","method":"ping"}));
        assert_eq!(r.params, None);
    }

    #[test]
    fn request_with_array_params_is_valid() {
        let r = request(json!({"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}));
        assert_eq!(r.params, Some(json!([1, 2])));
    }

    #[test]
    fn message_without_id_is_a_notification() {
        let m = classify(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        assert_eq!(
            m.unwrap(),
            IncomingMessage::Notification(Notification {
                method: "notifications/initialized".into(),
                params: None
            })
        );
    }

    #[test]
    fn success_response_is_classified() {
        let m = classify(json!({"jsonrpc":"2.0","id":3,"result":{"ok":true}}));
        assert_eq!(
            m.unwrap(),
            IncomingMessage::Response(Response::success(Id::Int(3), json!({"ok":true})))
        );
    }

    #[test]
    fn error_response_is_classified() {
        let m = classify(
            json!({"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no","data":[1]}}),
        );
        assert_eq!(
            m.unwrap(),
            IncomingMessage::Response(Response::error(
                Some(Id::from("a")),
                ErrorObject::new(ErrorCode::METHOD_NOT_FOUND, "no").with_data(json!([1]))
            ))
        );
    }

    #[test]
    fn error_response_with_null_id_is_valid() {
        let m = classify(
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}),
        );
        assert_eq!(
            m.unwrap(),
            IncomingMessage::Response(Response::error(None, ErrorObject::parse_error()))
        );
    }

    #[test]
    fn string_id_is_kept_exactly() {
        assert_eq!(
            request(json!({"jsonrpc":"2.0","id":"01","method":"m"})).id,
            Id::String("01".into())
        );
    }

    #[test]
    fn i64_extremes_are_kept_exactly() {
        for n in [i64::MIN, -1, 0, i64::MAX] {
            let r = request(json!({"jsonrpc":"2.0","id":n,"method":"m"}));
            assert_eq!(r.id, Id::Int(n));
            assert_eq!(r.into_value()["id"], json!(n));
        }
    }

    #[test]
    fn u64_max_is_kept_exactly() {
        let r = request(json!({"jsonrpc":"2.0","id":u64::MAX,"method":"m"}));
        assert_eq!(r.id, Id::UInt(u64::MAX));
        assert_eq!(
            crate::json::to_string(&r.into_value()),
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#
        );
    }

    #[test]
    fn u64_that_fits_i64_normalises_to_int() {
        assert_eq!(Id::from(5u64), Id::Int(5));
        assert_eq!(Id::from(u64::MAX), Id::UInt(u64::MAX));
    }

    #[test]
    fn batch_array_is_invalid() {
        let err = rejected(json!([{"jsonrpc":"2.0","id":1,"method":"m"}]));
        assert_eq!(err.id, None);
        assert_eq!(err.reason, "batch requests are not supported");
    }

    #[test]
    fn non_object_is_invalid() {
        assert_eq!(
            rejected(json!("hi")).reason,
            "message must be a JSON object"
        );
    }

    #[test]
    fn wrong_jsonrpc_version_is_invalid_and_keeps_the_id() {
        let err = rejected(json!({"jsonrpc":"1.0","id":9,"method":"m"}));
        assert_eq!(err.id, Some(Id::Int(9)));
        assert_eq!(err.reason, "jsonrpc must be \"2.0\"");
    }

    #[test]
    fn missing_jsonrpc_member_is_invalid() {
        assert_eq!(rejected(json!({"id":1,"method":"m"})).id, Some(Id::Int(1)));
    }

    #[test]
    fn jsonrpc_as_a_number_is_invalid() {
        rejected(json!({"jsonrpc":2.0,"id":1,"method":"m"}));
    }

    #[test]
    fn missing_method_result_and_error_is_invalid_and_keeps_the_id() {
        let err = rejected(json!({"jsonrpc":"2.0","id":"q"}));
        assert_eq!(err.id, Some(Id::from("q")));
    }

    #[test]
    fn non_string_method_is_invalid_and_keeps_the_id() {
        let err = rejected(json!({"jsonrpc":"2.0","id":4,"method":12}));
        assert_eq!(err.id, Some(Id::Int(4)));
        assert_eq!(err.reason, "method must be a string");
    }

    #[test]
    fn params_that_are_not_object_or_array_are_invalid() {
        for params in [json!("s"), json!(1), json!(true), Value::Null] {
            let err = rejected(json!({"jsonrpc":"2.0","id":2,"method":"m","params":params}));
            assert_eq!(err.id, Some(Id::Int(2)));
            assert_eq!(err.reason, "params must be an object or an array");
        }
    }

    #[test]
    fn request_ids_that_are_not_string_or_integer_are_invalid() {
        for id in [Value::Null, json!(1.5), json!(true), json!({}), json!([1])] {
            let err = rejected(json!({"jsonrpc":"2.0","id":id,"method":"m"}));
            assert_eq!(err.id, None, "id {id}");
            assert_eq!(err.reason, "id must be a string or an integer");
        }
    }

    #[test]
    fn integral_float_id_is_not_an_integer() {
        // 1.0 is a float in JSON terms; accepting it would break exact echoing.
        rejected(json!({"jsonrpc":"2.0","id":1.0,"method":"m"}));
    }

    #[test]
    fn response_with_both_result_and_error_is_invalid() {
        let err =
            rejected(json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}));
        assert_eq!(err.id, Some(Id::Int(1)));
    }

    #[test]
    fn success_response_with_null_id_is_invalid() {
        rejected(json!({"jsonrpc":"2.0","id":null,"result":1}));
    }

    #[test]
    fn malformed_error_object_is_invalid() {
        for error in [
            json!("x"),
            json!({"message":"m"}),
            json!({"code":1.5,"message":"m"}),
            json!({"code":1}),
        ] {
            rejected(json!({"jsonrpc":"2.0","id":1,"error":error}));
        }
    }

    #[test]
    fn unknown_members_are_ignored() {
        let r = request(json!({"jsonrpc":"2.0","id":1,"method":"m","extra":true}));
        assert_eq!(r.method, "m");
    }

    #[test]
    fn invalid_message_answers_invalid_request_with_its_id() {
        let err = rejected(json!({"jsonrpc":"2.0","id":"r1","method":"m","params":3}));
        let reply = err.to_response().into_value();
        assert_eq!(
            crate::json::to_string(&reply),
            r#"{"jsonrpc":"2.0","id":"r1","error":{"code":-32600,"message":"Invalid Request: params must be an object or an array"}}"#
        );
    }

    #[test]
    fn invalid_message_without_id_answers_with_null_id() {
        let reply = rejected(json!([])).to_response().into_value();
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], json!(-32600));
    }

    #[test]
    fn success_response_serialises_in_member_order() {
        let v = Response::success(Id::Int(1), json!({"x":1})).into_value();
        assert_eq!(
            crate::json::to_string(&v),
            r#"{"jsonrpc":"2.0","id":1,"result":{"x":1}}"#
        );
    }

    #[test]
    fn error_response_serialises_in_member_order() {
        let v = Response::error(Some(Id::from("a")), ErrorObject::method_not_found("nope"))
            .into_value();
        assert_eq!(
            crate::json::to_string(&v),
            r#"{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found: nope"}}"#
        );
    }

    #[test]
    fn notification_serialises_in_member_order() {
        let v = Notification {
            method: "notifications/progress".into(),
            params: Some(json!({"progressToken":"t","progress":1})),
        }
        .into_value();
        assert_eq!(
            crate::json::to_string(&v),
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}"#
        );
    }

    #[test]
    fn request_round_trips_through_from_value() {
        let original = Request {
            id: Id::UInt(u64::MAX),
            method: "ping".into(),
            params: Some(json!({})),
        };
        let back = classify(original.clone().into_value()).unwrap();
        assert_eq!(back, IncomingMessage::Request(original));
    }

    #[test]
    fn error_constructors_use_standard_codes_and_messages() {
        assert_eq!(ErrorObject::parse_error().code.0, -32700);
        assert_eq!(ErrorObject::parse_error().message, "Parse error");
        assert_eq!(ErrorObject::invalid_request("x").code, ErrorCode(-32600));
        assert_eq!(ErrorObject::method_not_found("m").code, ErrorCode(-32601));
        assert_eq!(ErrorObject::invalid_params("p").code, ErrorCode(-32602));
        assert_eq!(ErrorObject::internal_error("i").code, ErrorCode(-32603));
    }

    #[test]
    fn unsupported_protocol_version_lists_the_supported_ones() {
        let e = ErrorObject::unsupported_protocol_version("1999-01-01", &["2025-06-18"]);
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            e.data,
            Some(json!({"requested":"1999-01-01","supported":["2025-06-18"]}))
        );
    }

    #[test]
    fn params_meta_returns_the_meta_object() {
        let params = json!({"_meta":{"progressToken":5},"name":"x"});
        assert_eq!(params_meta(&params).unwrap()["progressToken"], json!(5));
        assert_eq!(params_meta(&json!({"_meta":1})), None);
        assert_eq!(params_meta(&json!([1])), None);
        let r = request(json!({"jsonrpc":"2.0","id":1,"method":"m","params":params}));
        assert!(r.meta().is_some());
    }

    #[test]
    fn id_displays_as_json() {
        assert_eq!(Id::from("a\"b").to_string(), r#""a\"b""#);
        assert_eq!(Id::Int(-3).to_string(), "-3");
        assert_eq!(
            serde_json::to_string(&Id::UInt(u64::MAX)).unwrap(),
            "18446744073709551615"
        );
    }
}
