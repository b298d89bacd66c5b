//! The project-files crate for Java: roots and cancellation flags by handle, requests and
//! results as JSON. Every operation runs on the calling Java thread (a search also on the
//! walker's own threads, which never touch JNI) and returns when done: a read or a listing at
//! once, a search within its deadline or soon after its cancellation flag is raised.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ide_mcp_project_files::search::{self, CancelFlag, FindRequest, SearchRequest, Stop};
use ide_mcp_project_files::{Credentials, Entry, Error, ProjectFiles, ReadLimits};
use serde_json::{json, Map, Value};

use crate::error::BridgeError;
use crate::handles::HandleTable;

static ROOTS: HandleTable<Arc<ProjectFiles>> = HandleTable::new();
static CANCELS: HandleTable<CancelFlag> = HandleTable::new();

/// A refusal of the files layer: `FileAccessException`, with the crate's message.
fn refused(error: Error) -> BridgeError {
    BridgeError::FileAccess(error.to_string())
}

fn root(handle: i64) -> Result<Arc<ProjectFiles>, BridgeError> {
    ROOTS.get(handle).ok_or_else(|| {
        BridgeError::IllegalState(format!(
            "no open project root has handle {handle}: it was closed already, or never opened"
        ))
    })
}

/// Opens a project root; `portable_walk` chooses the `openat(O_NOFOLLOW)` walk over
/// `openat2` (for tests of the walk on Linux).
pub fn open(path: &str, portable_walk: bool) -> Result<i64, BridgeError> {
    let opened = if portable_walk {
        ProjectFiles::open_with_portable_walk(Path::new(path))
    } else {
        ProjectFiles::open(Path::new(path))
    };
    Ok(ROOTS.insert(Arc::new(opened.map_err(refused)?)))
}

/// Closes a root; searches still running on it finish first (they hold it).
pub fn close(handle: i64) -> bool {
    ROOTS.remove(handle).is_some()
}

/// The canonical path of the root.
pub fn root_path(handle: i64) -> Result<String, BridgeError> {
    Ok(root(handle)?.root().to_string_lossy().into_owned())
}

fn positive(value: i64) -> Option<u64> {
    u64::try_from(value).ok().filter(|&value| value > 0)
}

fn credentials(allow: bool) -> Credentials {
    if allow {
        Credentials::ExplicitlyAllowed
    } else {
        Credentials::Withhold
    }
}

/// `read_lines`: line numbers and limits of 0 or less are unset.
pub struct ReadArguments {
    pub start_line: i64,
    pub end_line: i64,
    pub max_file_bytes: i64,
    pub max_whole_bytes: i64,
    pub max_content_bytes: i64,
    pub allow_credentials: bool,
}

pub fn read_lines(
    handle: i64,
    path: &str,
    arguments: &ReadArguments,
) -> Result<String, BridgeError> {
    let defaults = ReadLimits::default();
    let limits = ReadLimits {
        max_file_bytes: positive(arguments.max_file_bytes).unwrap_or(defaults.max_file_bytes),
        max_whole_bytes: positive(arguments.max_whole_bytes).unwrap_or(defaults.max_whole_bytes),
        max_content_bytes: positive(arguments.max_content_bytes)
            .and_then(|value| usize::try_from(value).ok())
            .unwrap_or(defaults.max_content_bytes),
    };
    let line = |value: i64| positive(value).and_then(|value| usize::try_from(value).ok());
    let lines = root(handle)?
        .read_lines(
            path,
            line(arguments.start_line),
            line(arguments.end_line),
            limits,
            credentials(arguments.allow_credentials),
        )
        .map_err(refused)?;
    Ok(json!({
        "totalLines": lines.total_lines,
        "startLine": lines.start_line,
        "endLine": lines.end_line,
        "truncated": lines.truncated,
        "content": lines.content,
    })
    .to_string())
}

fn entry_json(entry: &Entry) -> Value {
    json!({
        "name": entry.name,
        "type": entry.kind.as_str(),
        "size": entry.size,
        "modifiedMillis": entry.modified_millis,
    })
}

pub fn list_directory(handle: i64, path: &str, max_entries: i64) -> Result<String, BridgeError> {
    let max = usize::try_from(max_entries).unwrap_or(0);
    let (entries, total) = root(handle)?.list_directory(path, max).map_err(refused)?;
    Ok(json!({
        "entries": entries.iter().map(entry_json).collect::<Vec<_>>(),
        "total": total,
    })
    .to_string())
}

pub fn stat(handle: i64, path: &str) -> Result<String, BridgeError> {
    Ok(entry_json(&root(handle)?.stat(path).map_err(refused)?).to_string())
}

pub fn new_cancel() -> i64 {
    CANCELS.insert(CancelFlag::new())
}

/// Raises a flag; an unknown handle (freed already) is nothing to cancel.
pub fn cancel(handle: i64) -> bool {
    CANCELS.get(handle).map(|flag| flag.cancel()).is_some()
}

pub fn free_cancel(handle: i64) -> bool {
    CANCELS.remove(handle).is_some()
}

/// A request's fields, read with the names the Java side writes.
struct Fields(Map<String, Value>);

impl Fields {
    fn parse(json: &str) -> Result<Self, BridgeError> {
        match serde_json::from_str(json) {
            Ok(Value::Object(fields)) => Ok(Fields(fields)),
            _ => Err(BridgeError::IllegalArgument(
                "the request must be a JSON object".to_owned(),
            )),
        }
    }

    fn string(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    fn number(&self, name: &str) -> Option<u64> {
        self.0.get(name).and_then(Value::as_u64)
    }

    fn flag(&self, name: &str) -> bool {
        self.0.get(name).and_then(Value::as_bool) == Some(true)
    }

    fn size(&self, name: &str, fallback: usize) -> usize {
        self.number(name)
            .and_then(|value| usize::try_from(value).ok())
            .unwrap_or(fallback)
    }

    fn stop(&self, cancel: i64) -> Stop {
        Stop {
            cancel: CANCELS.get(cancel).unwrap_or_default(),
            deadline: self
                .number("timeoutMillis")
                .and_then(|millis| Instant::now().checked_add(Duration::from_millis(millis))),
        }
    }
}

/// `search_text`: `{pattern, ignoreCase?, glob?, path?, maxMatches?, maxFileBytes?,
/// allowCredentials?, timeoutMillis?, threads?}`.
pub fn search_text(handle: i64, cancel: i64, request_json: &str) -> Result<String, BridgeError> {
    let fields = Fields::parse(request_json)?;
    let pattern = fields
        .string("pattern")
        .ok_or_else(|| BridgeError::IllegalArgument("the search needs a `pattern`".to_owned()))?;
    let request = SearchRequest {
        pattern,
        ignore_case: fields.flag("ignoreCase"),
        glob: fields.string("glob"),
        path: fields.string("path").unwrap_or(""),
        max_matches: fields.size("maxMatches", 100),
        max_file_bytes: fields.number("maxFileBytes").unwrap_or(8 * 1024 * 1024),
        credentials: credentials(fields.flag("allowCredentials")),
        threads: fields.size("threads", 0),
    };
    let outcome =
        search::search_text(&*root(handle)?, &request, &fields.stop(cancel)).map_err(refused)?;
    Ok(json!({
        "matches": outcome.matches.iter().map(|found| json!({
            "path": found.path,
            "line": found.line,
            "text": found.text,
        })).collect::<Vec<_>>(),
        "filesSearched": outcome.files_searched,
        "filesSkipped": outcome.files_skipped,
        "filesWithheld": outcome.files_withheld,
        "truncated": outcome.truncated,
        "timedOut": outcome.timed_out,
    })
    .to_string())
}

/// `find_files`: `{glob, path?, maxResults?, allowCredentials?, timeoutMillis?, threads?}`.
pub fn find_files(handle: i64, cancel: i64, request_json: &str) -> Result<String, BridgeError> {
    let fields = Fields::parse(request_json)?;
    let request = FindRequest {
        glob: fields.string("glob").unwrap_or(""),
        path: fields.string("path").unwrap_or(""),
        max_results: fields.size("maxResults", 200),
        credentials: credentials(fields.flag("allowCredentials")),
        threads: fields.size("threads", 0),
    };
    let outcome =
        search::find_files(&*root(handle)?, &request, &fields.stop(cancel)).map_err(refused)?;
    Ok(json!({
        "files": outcome.files,
        "filesWithheld": outcome.files_withheld,
        "truncated": outcome.truncated,
        "timedOut": outcome.timed_out,
    })
    .to_string())
}
