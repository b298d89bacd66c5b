//! `params._meta` of a request or notification: the one place its keys are read.

use serde_json::{Map, Value};

use ide_mcp_protocol::contract::{PROTOCOL_VERSION_META_KEY, TOKEN_META_KEY};
use ide_mcp_protocol::json;

/// The members of `_meta` the servers read.
pub(crate) const META_MEMBERS: [&str; 3] =
    [TOKEN_META_KEY, PROTOCOL_VERSION_META_KEY, "progressToken"];

/// What the servers read from a message's `_meta`, taken out of it once.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestMeta {
    /// The token the message presents, if it is a string.
    pub token: Option<String>,
    /// The modern era's protocol version, as sent (any JSON value, so a bad one can be named).
    pub protocol_version: Option<Value>,
    /// `progressToken`, when it is a string or an integer (anything else is ignored).
    pub progress_token: Option<Value>,
}

impl RequestMeta {
    /// Takes `_meta` out of `params` (an object, or anything else, which has no `_meta`).
    /// The values move out; nothing is copied.
    pub fn take_from(params: Option<&mut Value>) -> Self {
        let meta = params
            .and_then(Value::as_object_mut)
            .and_then(|params| params.remove("_meta"));
        match meta {
            Some(Value::Object(meta)) => Self::from_map(meta),
            _ => RequestMeta::default(),
        }
    }

    fn from_map(meta: Map<String, Value>) -> Self {
        Self::from_members(json::take_members(meta, META_MEMBERS))
    }

    /// Reads the members named by [`META_MEMBERS`], in that order.
    pub(crate) fn from_members(members: [Option<Value>; 3]) -> Self {
        let [token, protocol_version, progress_token] = members;
        let token = match token {
            Some(Value::String(token)) => Some(token),
            _ => None,
        };
        let progress_token =
            progress_token.filter(|token| token.is_string() || token.is_i64() || token.is_u64());
        RequestMeta {
            token,
            protocol_version,
            progress_token,
        }
    }

    /// The requested protocol version as text for an error message: the string itself, or
    /// the JSON of a value that is not a string.
    pub fn protocol_version_text(&self) -> Option<String> {
        self.protocol_version.as_ref().map(|version| match version {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_token_version_and_progress_token_move_out_of_meta() {
        let mut params = json!({"_meta": {
            TOKEN_META_KEY: "t", PROTOCOL_VERSION_META_KEY: "2026-07-28", "progressToken": 7
        }, "name": "run"});
        let meta = RequestMeta::take_from(Some(&mut params));
        assert_eq!(meta.token.as_deref(), Some("t"));
        assert_eq!(meta.protocol_version, Some(json!("2026-07-28")));
        assert_eq!(meta.progress_token, Some(json!(7)));
        assert_eq!(params, json!({"name": "run"}));
    }

    #[test]
    fn values_of_the_wrong_type_are_not_taken_as_a_token_or_progress_token() {
        let mut params = json!({"_meta": {TOKEN_META_KEY: 5, "progressToken": [1]}});
        let meta = RequestMeta::take_from(Some(&mut params));
        assert_eq!(meta.token, None);
        assert_eq!(meta.progress_token, None);
    }

    #[test]
    fn params_without_an_object_meta_have_none() {
        for mut params in [json!([1, 2]), json!({"_meta": "x"}), json!({})] {
            assert_eq!(
                RequestMeta::take_from(Some(&mut params)),
                RequestMeta::default()
            );
        }
        assert_eq!(RequestMeta::take_from(None), RequestMeta::default());
    }
}
