//! Tunables of a server set, each with a safe default; `ServerConfig::default()` is the
//! contract.
//!
//! The options a host may set are listed once, in [`OPTIONS`]: their JSON keys (what the Java
//! `IdeMcpServers.Options` builder sends), which field each sets, how its value is checked and
//! how its default is shown in docs/SECURITY.md. An option left out keeps its default.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use ide_mcp_protocol::frame::MAX_FRAME_BYTES;

use crate::limits::DecodeLimits;
use crate::token_ring::TokenRingConfig;

pub use ide_mcp_protocol::contract::QUEUE_DEPTH;

/// Every knob of a running server set.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Calls in flight per connection; one more is answered at once with an error.
    pub queue_depth: usize,
    /// Handlers running at once per server, across all its connections.
    pub max_running_handlers: usize,
    /// Authenticated connections open at once per server; a connection over it waits, after
    /// its first valid token, until one closes.
    pub max_connections_per_server: usize,
    /// Authenticated connections one peer process may have open on a server; one more is
    /// refused.
    pub max_connections_per_peer: usize,
    /// Connections per server that have not presented a valid token yet; when they are this
    /// many, a newcomer sheds the oldest of the process that holds the most.
    pub max_unauthenticated_connections: usize,
    /// The largest frame (or NDJSON line) accepted or sent, at most 64 MiB.
    pub max_frame_bytes: usize,
    /// Limits on the decoded shape of every message.
    pub decode_limits: DecodeLimits,
    /// The largest `args` of a `run`, measured as compact JSON.
    pub max_argument_bytes: usize,
    /// The largest result a handler may return, measured as compact JSON; a larger one is an
    /// error result (unlike the output budget, which cuts).
    pub max_result_bytes: usize,
    /// The largest tool result text sent back; a longer one is cut and says so first. The
    /// default keeps a result inline in Claude Code (see docs/MCP_CLIENT.md).
    pub output_budget_bytes: usize,
    /// The deadline of a tool that does not declare its own.
    pub default_deadline: Duration,
    /// How long the guard may take before its silence counts as a denial.
    pub guard_timeout: Duration,
    /// How long a person may take to answer a confirmation before it counts as a denial.
    pub confirmation_timeout: Duration,
    /// How long an unexpected client waits for the host's answer before it is closed.
    pub admission_timeout: Duration,
    /// How long a client the host rejected is refused again without a new prompt.
    pub rejection_cooldown: Duration,
    /// How long an admitted connection may take to send its first message with a valid token
    /// (messages without one do not count).
    pub first_message_timeout: Duration,
    /// How long a frame header may take to arrive once its first byte has.
    pub header_timeout: Duration,
    /// How long a frame body (or a line) may take to arrive once its header has.
    pub body_timeout: Duration,
    /// How long a connection with no calls in flight may stay silent.
    pub idle_timeout: Duration,
    /// How long one write to a client may take; a client that stops reading is closed.
    pub write_timeout: Duration,
    /// How long a connection looks at its socket for a prompt client's next message before
    /// it waits through the runtime (`connection/request_watch.rs`); zero never looks.
    pub socket_look: Duration,
    /// Bad messages (undecodable, invalid, unauthenticated) one connection may send before
    /// it is closed.
    pub max_bad_messages: u32,
    /// How often a long call with a progress token gets a heartbeat notification.
    pub progress_heartbeat: Duration,
    /// How often the token rotates, and how long the previous one stays valid.
    pub tokens: TokenRingConfig,
    /// The project's roots: arguments a tool marks as paths must resolve inside one of them.
    pub project_roots: Vec<PathBuf>,
    /// How many audit records are kept (the oldest go first).
    pub audit_capacity: usize,
    /// How long stop waits for running calls and connections to finish.
    pub drain_timeout: Duration,
    /// Worker threads of the runtime that does all socket I/O.
    pub worker_threads: usize,
    /// Whether the set writes a record in the per-user registry of live server sets, so that
    /// `ide-mcp list` and `ide-mcp bridge --project` find it.
    pub register_live_set: bool,
    /// The IDE or host the registry record names; empty: the program's executable name.
    pub host_name: String,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            queue_depth: QUEUE_DEPTH,
            max_running_handlers: 64,
            max_connections_per_server: 64,
            max_connections_per_peer: 32,
            max_unauthenticated_connections: 32,
            max_frame_bytes: MAX_FRAME_BYTES,
            decode_limits: DecodeLimits::default(),
            max_argument_bytes: 1024 * 1024,
            max_result_bytes: 32 * 1024 * 1024,
            output_budget_bytes: 32 * 1024,
            default_deadline: Duration::from_secs(120),
            guard_timeout: Duration::from_secs(30),
            confirmation_timeout: Duration::from_secs(120),
            admission_timeout: Duration::from_secs(120),
            rejection_cooldown: Duration::from_secs(30),
            first_message_timeout: Duration::from_secs(10),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(3600),
            write_timeout: Duration::from_secs(30),
            socket_look: Duration::from_micros(50),
            max_bad_messages: 32,
            progress_heartbeat: Duration::from_secs(1),
            tokens: TokenRingConfig::default(),
            project_roots: Vec::new(),
            audit_capacity: 1000,
            drain_timeout: Duration::from_secs(5),
            worker_threads: 2,
            register_live_set: true,
            host_name: String::new(),
        }
    }
}

/// Why a set of options was refused; the message names the option.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// The text is not a JSON object.
    NotAnObject(String),
    /// A key that names no option.
    Unknown(String),
    /// A known option with a value it does not take.
    Invalid {
        /// The option's key.
        key: &'static str,
        /// What its value must be.
        expected: &'static str,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::NotAnObject(problem) => write!(f, "the options {problem}"),
            OptionError::Unknown(key) => {
                write!(f, "unknown option `{key}`; the options are ")?;
                let keys: Vec<&str> = ServerConfig::option_keys().collect();
                f.write_str(&keys.join(", "))
            }
            OptionError::Invalid { key, expected } => {
                write!(f, "option `{key}` must be {expected}")
            }
        }
    }
}

impl std::error::Error for OptionError {}

/// One option a host may set: its JSON key, what it limits, how it is set and how its default
/// is shown.
#[derive(Clone, Copy)]
pub struct ConfigOption {
    /// The key in the options object (camelCase, as the Java builder sends it).
    pub key: &'static str,
    /// What it limits, as the table of defaults says.
    pub what: &'static str,
    set: fn(&mut ServerConfig, &Value) -> Result<(), OptionError>,
    show: fn(&ServerConfig) -> String,
}

impl fmt::Debug for ConfigOption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigOption")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl ConfigOption {
    /// This option's value in `config`, as the table of defaults shows it (`64 MiB`, `30 s`).
    pub fn show(&self, config: &ServerConfig) -> String {
        (self.show)(config)
    }
}

/// How one kind of option is read from JSON and shown in the table of defaults.
trait Kind {
    type Value;
    /// What the value must be, for the error message.
    const EXPECTED: &'static str;
    fn parse(value: &Value) -> Option<Self::Value>;
    fn show(value: &Self::Value) -> String;
}

fn positive_usize(value: &Value) -> Option<usize> {
    value
        .as_u64()
        .filter(|number| *number > 0)
        .and_then(|number| usize::try_from(number).ok())
}

fn group_digits(number: usize) -> String {
    let digits = number.to_string();
    if number < 10_000 {
        return digits;
    }
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// A positive count.
struct Count;

impl Kind for Count {
    type Value = usize;
    const EXPECTED: &'static str = "a positive integer";
    fn parse(value: &Value) -> Option<usize> {
        positive_usize(value)
    }
    fn show(value: &usize) -> String {
        group_digits(*value)
    }
}

/// A count that may be zero and fits 32 bits.
struct Count32;

impl Kind for Count32 {
    type Value = u32;
    const EXPECTED: &'static str = "an integer from 0 to 4294967295";
    fn parse(value: &Value) -> Option<u32> {
        value.as_u64().and_then(|number| u32::try_from(number).ok())
    }
    fn show(value: &u32) -> String {
        value.to_string()
    }
}

/// A positive number of bytes.
struct Bytes;

impl Kind for Bytes {
    type Value = usize;
    const EXPECTED: &'static str = "a positive number of bytes";
    fn parse(value: &Value) -> Option<usize> {
        positive_usize(value)
    }
    fn show(value: &usize) -> String {
        const KIB: usize = 1024;
        const MIB: usize = 1024 * KIB;
        match *value {
            bytes if bytes % MIB == 0 => format!("{} MiB", bytes / MIB),
            bytes if bytes % KIB == 0 => format!("{} KiB", bytes / KIB),
            bytes => format!("{} bytes", group_digits(bytes)),
        }
    }
}

/// A frame size: positive bytes, at most the contract's `MAX_FRAME_BYTES`.
struct FrameBytes;

impl Kind for FrameBytes {
    type Value = usize;
    const EXPECTED: &'static str =
        "a positive number of bytes, at most the contract's MAX_FRAME_BYTES (64 MiB)";
    fn parse(value: &Value) -> Option<usize> {
        positive_usize(value).filter(|bytes| *bytes <= MAX_FRAME_BYTES)
    }
    fn show(value: &usize) -> String {
        Bytes::show(value)
    }
}

/// A duration in milliseconds, zero allowed.
struct Millis;

impl Kind for Millis {
    type Value = Duration;
    const EXPECTED: &'static str = "a non-negative number of milliseconds";
    fn parse(value: &Value) -> Option<Duration> {
        value.as_u64().map(Duration::from_millis)
    }
    fn show(value: &Duration) -> String {
        let seconds = value.as_secs();
        if value.subsec_millis() != 0 || seconds == 0 {
            format!("{} ms", value.as_millis())
        } else if seconds.is_multiple_of(3600) {
            format!("{} h", seconds / 3600)
        } else if seconds >= 600 && seconds.is_multiple_of(60) {
            format!("{} min", seconds / 60)
        } else {
            format!("{seconds} s")
        }
    }
}

/// A short duration in microseconds, zero allowed, at most [`MAX_LOOK_MICROS`].
struct LookMicros;

/// The longest look at a socket an option may ask for: a look holds a worker thread.
const MAX_LOOK_MICROS: u64 = 1_000;

impl Kind for LookMicros {
    type Value = Duration;
    const EXPECTED: &'static str = "a number of microseconds from 0 to 1000";
    fn parse(value: &Value) -> Option<Duration> {
        value
            .as_u64()
            .filter(|micros| *micros <= MAX_LOOK_MICROS)
            .map(Duration::from_micros)
    }
    fn show(value: &Duration) -> String {
        format!("{} µs", value.as_micros())
    }
}

/// A duration in milliseconds, at least 1.
struct PositiveMillis;

impl Kind for PositiveMillis {
    type Value = Duration;
    const EXPECTED: &'static str = "a positive number of milliseconds";
    fn parse(value: &Value) -> Option<Duration> {
        Millis::parse(value).filter(|duration| !duration.is_zero())
    }
    fn show(value: &Duration) -> String {
        Millis::show(value)
    }
}

/// Directories, as an array of non-empty strings.
struct Paths;

impl Kind for Paths {
    type Value = Vec<PathBuf>;
    const EXPECTED: &'static str = "an array of non-empty path strings";
    fn parse(value: &Value) -> Option<Vec<PathBuf>> {
        value
            .as_array()?
            .iter()
            .map(|item| {
                item.as_str()
                    .filter(|path| !path.is_empty())
                    .map(PathBuf::from)
            })
            .collect()
    }
    fn show(value: &Vec<PathBuf>) -> String {
        if value.is_empty() {
            return "none".to_owned();
        }
        let paths: Vec<String> = value
            .iter()
            .map(|path| path.display().to_string())
            .collect();
        paths.join(", ")
    }
}

/// On or off.
struct Switch;

impl Kind for Switch {
    type Value = bool;
    const EXPECTED: &'static str = "true or false";
    fn parse(value: &Value) -> Option<bool> {
        value.as_bool()
    }
    fn show(value: &bool) -> String {
        if *value { "on" } else { "off" }.to_owned()
    }
}

/// A short name for people: at most 256 bytes, no control characters.
struct Label;

impl Kind for Label {
    type Value = String;
    const EXPECTED: &'static str = "a string of at most 256 bytes without control characters";
    fn parse(value: &Value) -> Option<String> {
        value
            .as_str()
            .filter(|text| text.len() <= 256 && !text.chars().any(char::is_control))
            .map(str::to_owned)
    }
    fn show(value: &String) -> String {
        if value.is_empty() {
            "the program's name".to_owned()
        } else {
            format!("`{value}`")
        }
    }
}

/// Writes [`OPTIONS`]: each line is `key => field.path: Kind, "what it limits";`.
macro_rules! options {
    ($($key:literal => $($field:ident).+ : $kind:ident, $what:literal;)*) => {
        /// Every option a host may set, in the order of the table of defaults.
        pub const OPTIONS: &[ConfigOption] = &[$(ConfigOption {
            key: $key,
            what: $what,
            set: |config, value| {
                config.$($field).+ = <$kind as Kind>::parse(value).ok_or(OptionError::Invalid {
                    key: $key,
                    expected: <$kind as Kind>::EXPECTED,
                })?;
                Ok(())
            },
            show: |config| <$kind as Kind>::show(&config.$($field).+),
        }),*];
    };
}

options! {
    "maxFrameBytes" => max_frame_bytes: FrameBytes, "frame / line (also the ceiling)";
    "queueDepth" => queue_depth: Count, "calls in flight per connection";
    "maxRunningHandlers" => max_running_handlers: Count, "handlers running per server";
    "maxConnectionsPerServer" => max_connections_per_server: Count,
        "authenticated connections per server (more wait)";
    "maxConnectionsPerPeer" => max_connections_per_peer: Count,
        "authenticated connections of one process per server (more are refused)";
    "maxUnauthenticatedConnections" => max_unauthenticated_connections: Count,
        "connections per server without a valid token yet (more shed the oldest)";
    "firstMessageTimeoutMillis" => first_message_timeout: PositiveMillis,
        "first message with a valid token, once admitted";
    "headerTimeoutMillis" => header_timeout: PositiveMillis, "frame header, once its first byte arrived";
    "bodyTimeoutMillis" => body_timeout: PositiveMillis, "frame body or line, once its header arrived";
    "idleTimeoutMillis" => idle_timeout: PositiveMillis, "silence of a connection with no calls in flight";
    "writeTimeoutMillis" => write_timeout: PositiveMillis, "one write to a client";
    "socketLookMicros" => socket_look: LookMicros,
        "a look at the socket for the next message of a client that sends it right after each reply, before waiting (0: never)";
    "maxBadMessages" => max_bad_messages: Count32, "bad messages per connection";
    "maxStringBytes" => decode_limits.max_string_bytes: Bytes, "string in a message";
    "maxArrayLength" => decode_limits.max_array_len: Count, "array elements in a message";
    "maxObjectKeys" => decode_limits.max_object_keys: Count, "object keys in a message";
    "maxDepth" => decode_limits.max_depth: Count, "nesting depth of a message";
    "maxArgumentBytes" => max_argument_bytes: Bytes, "`args` of a `run`, as compact JSON";
    "maxResultBytes" => max_result_bytes: Bytes, "handler result, as compact JSON (larger is an error)";
    "outputBudgetBytes" => output_budget_bytes: Bytes, "text sent back (cut, and says so first)";
    "defaultDeadlineMillis" => default_deadline: Millis, "deadline of a tool that declares none";
    "guardTimeoutMillis" => guard_timeout: Millis, "guard answer (silence is a denial)";
    "confirmationTimeoutMillis" => confirmation_timeout: Millis, "confirmation answer (silence is a denial)";
    "admissionTimeoutMillis" => admission_timeout: Millis, "admission answer (silence closes the client)";
    "rejectionCooldownMillis" => rejection_cooldown: Millis, "a rejected client refused without a new prompt";
    "progressHeartbeatMillis" => progress_heartbeat: Millis, "progress heartbeat of a long call";
    "tokenRotationMillis" => tokens.rotation: Millis, "token rotation";
    "tokenOverlapMillis" => tokens.overlap: Millis, "previous token still valid after a rotation";
    "projectRoots" => project_roots: Paths, "project roots path arguments must resolve inside";
    "auditCapacity" => audit_capacity: Count, "audit records kept";
    "drainTimeoutMillis" => drain_timeout: Millis, "stop waiting for calls and connections";
    "workerThreads" => worker_threads: Count, "socket I/O threads";
    "registerLiveSet" => register_live_set: Switch,
        "a record in the per-user registry of live server sets (`ide-mcp list`, `bridge --project`)";
    "hostName" => host_name: Label, "the IDE or host the registry record names";
}

impl ServerConfig {
    /// The largest message a server reads: no valid request is larger than its arguments
    /// (capped at `max_argument_bytes`, as compact JSON) twice over, for TOON's indentation,
    /// plus room for the envelope; and never more than `max_frame_bytes`, the format's ceiling
    /// and the largest reply. A larger frame is refused before it is buffered or decoded.
    pub fn inbound_message_ceiling(&self) -> usize {
        const ENVELOPE_BYTES: usize = 64 * 1024;
        self.max_argument_bytes
            .saturating_mul(2)
            .saturating_add(ENVELOPE_BYTES)
            .min(self.max_frame_bytes)
    }

    /// The JSON keys of every option, in the order of [`OPTIONS`].
    pub fn option_keys() -> impl Iterator<Item = &'static str> {
        OPTIONS.iter().map(|option| option.key)
    }

    /// The defaults with the options of `object` applied. An unknown key or a bad value is an
    /// error naming the key; an option left out keeps its default.
    pub fn from_json_object(object: &Map<String, Value>) -> Result<Self, OptionError> {
        let mut config = ServerConfig::default();
        for (key, value) in object {
            let option = OPTIONS
                .iter()
                .find(|option| option.key == key)
                .ok_or_else(|| OptionError::Unknown(key.clone()))?;
            (option.set)(&mut config, value)?;
        }
        Ok(config)
    }

    /// Like [`from_json_object`](Self::from_json_object), from JSON text.
    pub fn from_json(text: &str) -> Result<Self, OptionError> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => Self::from_json_object(&object),
            Ok(_) => Err(OptionError::NotAnObject("must be a JSON object".to_owned())),
            Err(error) => Err(OptionError::NotAnObject(format!(
                "are not valid JSON: {error}"
            ))),
        }
    }

    /// The table of defaults, in Markdown, as docs/SECURITY.md shows it.
    pub fn defaults_table() -> String {
        let defaults = ServerConfig::default();
        let mut table = String::from("| option | limits | default |\n|---|---|---|\n");
        for option in OPTIONS {
            table.push_str(&format!(
                "| `{}` | {} | {} |\n",
                option.key,
                option.what,
                option.show(&defaults)
            ));
        }
        table
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// Where docs/SECURITY.md's generated table starts and ends.
    const TABLE_START: &str =
        "<!-- table of defaults: generated from ServerConfig::default() -->\n";
    const TABLE_END: &str = "<!-- end of the table of defaults -->\n";

    fn object(json: &str) -> Map<String, Value> {
        match serde_json::from_str(json) {
            Ok(Value::Object(object)) => object,
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn an_empty_object_is_the_defaults() {
        let config = ServerConfig::from_json("{}").unwrap();
        assert_eq!(
            format!("{config:?}"),
            format!("{:?}", ServerConfig::default())
        );
    }

    #[test]
    fn every_option_is_set_by_its_key() {
        let set: Vec<&str> = OPTIONS.iter().map(|option| option.key).collect();
        let mut unique = set.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), set.len(), "a key appears twice: {set:?}");
        for option in OPTIONS {
            let value = match option.key {
                "projectRoots" => serde_json::json!(["/p"]),
                "registerLiveSet" => serde_json::json!(false),
                "hostName" => serde_json::json!("IDE"),
                _ => serde_json::json!(7),
            };
            let mut given = Map::new();
            given.insert(option.key.to_owned(), value);
            let config = ServerConfig::from_json_object(&given).unwrap();
            assert_ne!(
                option.show(&config),
                option.show(&ServerConfig::default()),
                "`{}` did not change its field",
                option.key
            );
        }
    }

    #[test]
    fn an_unknown_key_is_named_with_the_known_ones() {
        let error = ServerConfig::from_json_object(&object(r#"{"queueDepht":3}"#)).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("`queueDepht`"), "{message}");
        for key in ServerConfig::option_keys() {
            assert!(message.contains(key), "{message} does not list {key}");
        }
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        for bad in [
            r#"{"maxFrameBytes":67108865}"#,
            r#"{"idleTimeoutMillis":0}"#,
            r#"{"maxDepth":0}"#,
            r#"{"queueDepth":-1}"#,
            r#"{"guardTimeoutMillis":"1s"}"#,
            r#"{"maxBadMessages":4294967296}"#,
            r#"{"projectRoots":[""]}"#,
            r#"{"registerLiveSet":1}"#,
            r#"{"hostName":"a\nb"}"#,
            r#"{"socketLookMicros":1001}"#,
        ] {
            let error = ServerConfig::from_json(bad).unwrap_err();
            let key = bad.split('"').nth(1).unwrap();
            assert!(error.to_string().contains(key), "{bad}: {error}");
        }
        assert!(ServerConfig::from_json(r#"{"maxFrameBytes":67108864}"#).is_ok());
        assert!(ServerConfig::from_json(r#"{"maxBadMessages":0}"#).is_ok());
        let never = ServerConfig::from_json(r#"{"socketLookMicros":0}"#).unwrap();
        assert!(never.socket_look.is_zero());
        let longest = ServerConfig::from_json(r#"{"socketLookMicros":1000}"#).unwrap();
        assert_eq!(longest.socket_look, Duration::from_millis(1));
        assert!(ServerConfig::from_json("[]").is_err());
        assert!(ServerConfig::from_json("{").is_err());
    }

    #[test]
    fn defaults_show_in_their_units() {
        assert_eq!(Bytes::show(&(64 * 1024 * 1024)), "64 MiB");
        assert_eq!(Bytes::show(&(256 * 1024)), "256 KiB");
        assert_eq!(Count::show(&1_000_000), "1,000,000");
        assert_eq!(Count::show(&1000), "1000");
        assert_eq!(Millis::show(&Duration::from_secs(3600)), "1 h");
        assert_eq!(Millis::show(&Duration::from_secs(1800)), "30 min");
        assert_eq!(Millis::show(&Duration::from_secs(120)), "120 s");
        assert_eq!(Millis::show(&Duration::from_millis(1500)), "1500 ms");
    }

    /// docs/SECURITY.md's table of defaults is `ServerConfig::defaults_table()`.
    /// `IDE_MCP_WRITE_DOCS=1 cargo test -p ide-mcp-server --lib config` rewrites it.
    #[test]
    fn the_security_doc_shows_the_defaults() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SECURITY.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let start = doc
            .find(TABLE_START)
            .expect("docs/SECURITY.md has no table marker")
            + TABLE_START.len();
        let end = start
            + doc[start..]
                .find(TABLE_END)
                .expect("docs/SECURITY.md has no end marker");
        let table = ServerConfig::defaults_table();
        if doc[start..end] == table {
            return;
        }
        if std::env::var_os("IDE_MCP_WRITE_DOCS").is_some() {
            std::fs::write(path, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
            return;
        }
        panic!(
            "docs/SECURITY.md's table of defaults differs from ServerConfig::default(); \
             regenerate it with `IDE_MCP_WRITE_DOCS=1 cargo test -p ide-mcp-server --lib config`\n\
             expected:\n{table}\nfound:\n{}",
            &doc[start..end]
        );
    }
}
