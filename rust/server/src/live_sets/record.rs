//! One live server set's record: what `ide-mcp list` shows and `bridge --project` looks up.
//! Read from a file anyone of this user could have written, so it is checked field by field.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::process_info::ProcessIdentity;
use crate::server_name::ServerName;

use super::MAX_RECORD_BYTES;

/// The record format this code writes and reads; a record of another format is ignored.
pub const RECORD_FORMAT: u32 = 1;

/// The most project roots a record may name.
const MAX_ROOTS: usize = 64;

/// The longest host name kept, in bytes.
pub(crate) const MAX_HOST_BYTES: usize = 256;

/// One running server set, as its registry file holds it (JSON, camelCase keys). It names
/// where the sockets are, never the token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveSetRecord {
    /// [`RECORD_FORMAT`].
    pub format: u32,
    /// The project's root directories (absolute, canonical where they could be resolved).
    pub project_roots: Vec<PathBuf>,
    /// The runtime directory, which holds the sockets and the token file.
    pub socket_directory: PathBuf,
    /// The servers that have a socket (`code`, `run`, `vcs`, `ops`), in that order.
    pub servers: Vec<String>,
    /// The owning process.
    pub pid: i32,
    /// When the owning process started (clock ticks since boot), so that a later process
    /// given the same pid is not taken for it.
    pub pid_start_time: u64,
    /// The IDE or host serving the set, e.g. `IntelliJ IDEA 2026.1` or `ide-mcp headless`.
    pub host: String,
    /// When the set started, in seconds since 1970-01-01 UTC.
    pub started_at: u64,
}

impl LiveSetRecord {
    /// The record of a set this process serves now: `roots` canonicalized where they resolve,
    /// this process's identity, and `host` (or, when empty, this program's executable name).
    /// `None` when this process's start time cannot be read (then no reader could tell it
    /// alive).
    pub fn for_this_process(
        roots: &[PathBuf],
        socket_directory: &Path,
        servers: &[ServerName],
        host: &str,
        started_at: u64,
    ) -> Option<LiveSetRecord> {
        let identity = ProcessIdentity::of(i32::try_from(std::process::id()).ok()?)?;
        let host = if host.is_empty() {
            std::env::current_exe()
                .ok()
                .and_then(|exe| {
                    exe.file_name()
                        .map(|name| name.to_string_lossy().into_owned())
                })
                .unwrap_or_default()
        } else {
            host.to_owned()
        };
        let host: String = host.chars().take(MAX_HOST_BYTES / 4).collect();
        Some(LiveSetRecord {
            format: RECORD_FORMAT,
            project_roots: roots
                .iter()
                .map(|root| std::fs::canonicalize(root).unwrap_or_else(|_| root.clone()))
                .filter(|root| root.is_absolute())
                .take(MAX_ROOTS)
                .collect(),
            socket_directory: socket_directory.to_owned(),
            servers: servers
                .iter()
                .map(|server| server.as_str().to_owned())
                .collect(),
            pid: identity.pid,
            pid_start_time: identity.start_time,
            host,
            started_at,
        })
    }

    /// The record's JSON text.
    pub fn to_json(&self) -> Result<Vec<u8>, String> {
        serde_json::to_vec_pretty(self).map_err(|error| error.to_string())
    }

    /// Parses and checks a record file's bytes; the error says what is wrong with it.
    pub fn from_json(bytes: &[u8]) -> Result<LiveSetRecord, String> {
        if bytes.len() as u64 > MAX_RECORD_BYTES {
            return Err(format!("larger than {MAX_RECORD_BYTES} bytes"));
        }
        // serde_json bounds nesting (128 levels), so a hostile file costs at most its size.
        let record: LiveSetRecord =
            serde_json::from_slice(bytes).map_err(|error| format!("not a record: {error}"))?;
        record.check()?;
        Ok(record)
    }

    fn check(&self) -> Result<(), String> {
        if self.format != RECORD_FORMAT {
            return Err(format!(
                "record format {} (this ide-mcp reads format {RECORD_FORMAT})",
                self.format
            ));
        }
        if self.pid <= 0 {
            return Err(format!("pid {} is not a process id", self.pid));
        }
        if !self.socket_directory.is_absolute() {
            return Err("its socket directory is not an absolute path".to_owned());
        }
        if self.project_roots.len() > MAX_ROOTS {
            return Err(format!("more than {MAX_ROOTS} project roots"));
        }
        if let Some(root) = self.project_roots.iter().find(|root| !root.is_absolute()) {
            return Err(format!(
                "project root {} is not an absolute path",
                root.display()
            ));
        }
        if self.servers.len() > ServerName::ALL.len() {
            return Err("more servers than there are".to_owned());
        }
        if let Some(unknown) = self
            .servers
            .iter()
            .find(|server| server.parse::<ServerName>().is_err())
        {
            return Err(format!("unknown server {unknown:?}"));
        }
        if self.host.len() > MAX_HOST_BYTES {
            return Err(format!("a host name longer than {MAX_HOST_BYTES} bytes"));
        }
        Ok(())
    }

    /// Whether the set serves `server` now.
    pub fn serves(&self, server: ServerName) -> bool {
        self.servers.iter().any(|name| name == server.as_str())
    }

    /// The project roots for a message or a listing, joined by `separator`, or `none` when
    /// the set has no root.
    pub fn roots_joined(&self, separator: &str, none: &str) -> String {
        if self.project_roots.is_empty() {
            return none.to_owned();
        }
        let roots: Vec<String> = self
            .project_roots
            .iter()
            .map(|root| root.display().to_string())
            .collect();
        roots.join(separator)
    }

    /// The socket of `server` in this set.
    pub fn socket_path(&self, server: ServerName) -> PathBuf {
        self.socket_directory.join(server.socket_file_name())
    }

    /// The deepest of this set's roots that contains `directory` (or is it).
    pub(crate) fn deepest_root_containing(&self, directory: &Path) -> Option<&Path> {
        self.project_roots
            .iter()
            .filter(|root| directory.starts_with(root))
            .max_by_key(|root| root.components().count())
            .map(PathBuf::as_path)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// An absolute path on every OS (a drive in front on Windows).
    fn absolute(path: &str) -> PathBuf {
        if cfg!(windows) {
            PathBuf::from(format!("C:{path}"))
        } else {
            PathBuf::from(path)
        }
    }

    fn sample() -> LiveSetRecord {
        LiveSetRecord {
            format: RECORD_FORMAT,
            project_roots: vec![absolute("/home/me/app")],
            socket_directory: absolute("/tmp/claude-ide-mcp/abc"),
            servers: vec!["code".into(), "ops".into()],
            pid: 42,
            pid_start_time: 7,
            host: "test".into(),
            started_at: 1,
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let record = sample();
        let bytes = record.to_json().unwrap();
        assert_eq!(LiveSetRecord::from_json(&bytes).unwrap(), record);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("\"socketDirectory\""), "{text}");
        assert!(text.contains("\"pidStartTime\""), "{text}");
    }

    #[test]
    fn a_bad_record_is_refused_with_the_reason() {
        type Spoil = Box<dyn Fn(&mut LiveSetRecord)>;
        let cases: Vec<(Spoil, &str)> = vec![
            (Box::new(|r| r.format = 2), "format 2"),
            (Box::new(|r| r.pid = 0), "pid 0"),
            (
                Box::new(|r| r.socket_directory = "rel".into()),
                "socket directory",
            ),
            (
                Box::new(|r| r.project_roots = vec!["rel".into()]),
                "project root rel",
            ),
            (
                Box::new(|r| r.servers = vec!["shell".into()]),
                "unknown server",
            ),
            (
                Box::new(|r| r.host = "h".repeat(MAX_HOST_BYTES + 1)),
                "host name",
            ),
        ];
        for (spoil, expected) in cases {
            let mut record = sample();
            spoil(&mut record);
            let error = LiveSetRecord::from_json(&record.to_json().unwrap()).unwrap_err();
            assert!(
                error.contains(expected),
                "{error} should mention {expected}"
            );
        }
        assert!(LiveSetRecord::from_json(b"{")
            .unwrap_err()
            .contains("not a record"));
        let deep = "[".repeat(10_000);
        assert!(LiveSetRecord::from_json(deep.as_bytes()).is_err());
        let huge = vec![b' '; MAX_RECORD_BYTES as usize + 1];
        assert!(LiveSetRecord::from_json(&huge)
            .unwrap_err()
            .contains("larger"));
    }

    #[test]
    fn the_deepest_containing_root_is_chosen() {
        let mut record = sample();
        record.project_roots = vec!["/w".into(), "/w/app".into(), "/other".into()];
        assert_eq!(
            record.deepest_root_containing(Path::new("/w/app/src")),
            Some(Path::new("/w/app"))
        );
        assert_eq!(
            record.deepest_root_containing(Path::new("/w/lib")),
            Some(Path::new("/w"))
        );
        assert_eq!(record.deepest_root_containing(Path::new("/wapp")), None);
    }
}
