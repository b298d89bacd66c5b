//! Which live set serves a directory: the set one of whose roots contains it, the deepest root
//! winning when projects nest.

use std::fmt;
use std::path::{Path, PathBuf};

use super::listing::list_live_sets;
use super::record::LiveSetRecord;
use crate::runtime_dir::TOKEN_FILE_NAME;
use crate::server_name::ServerName;

/// Why no single set serves a directory; the message names what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// No live set's root contains the directory.
    NoMatch {
        /// The directory looked up.
        directory: PathBuf,
        /// The live sets there are.
        live: Vec<LiveSetRecord>,
    },
    /// Two or more live sets have the deepest root that contains the directory.
    Ambiguous {
        /// That root.
        root: PathBuf,
        /// The sets that serve it.
        sets: Vec<LiveSetRecord>,
    },
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LookupError::NoMatch { directory, live } => {
                write!(
                    f,
                    "no live IDE MCP server set serves {}",
                    directory.display()
                )?;
                if live.is_empty() {
                    return f.write_str("; no server set is running (`ide-mcp list` shows them)");
                }
                f.write_str("; the live sets serve:")?;
                for record in live {
                    write!(f, "\n  {}", describe(record))?;
                }
                Ok(())
            }
            LookupError::Ambiguous { root, sets } => {
                write!(
                    f,
                    "{} live IDE MCP server sets serve {}; close one, or bridge to a socket \
                     directly:",
                    sets.len(),
                    root.display()
                )?;
                for record in sets {
                    write!(f, "\n  {}", describe(record))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LookupError {}

fn describe(record: &LiveSetRecord) -> String {
    let roots = record.roots_joined(", ", "(no project root)");
    format!(
        "{roots}: pid {} ({}), sockets in {}",
        record.pid,
        record.host,
        record.socket_directory.display()
    )
}

/// The live set whose root contains `directory` (an absolute, canonical path), the deepest
/// root first.
pub fn find_for_project<'a>(
    live: &'a [LiveSetRecord],
    directory: &Path,
) -> Result<&'a LiveSetRecord, LookupError> {
    let matches: Vec<(&LiveSetRecord, &Path)> = live
        .iter()
        .filter_map(|record| Some((record, record.deepest_root_containing(directory)?)))
        .collect();
    let Some(depth) = matches
        .iter()
        .map(|(_, root)| root.components().count())
        .max()
    else {
        return Err(LookupError::NoMatch {
            directory: directory.to_owned(),
            live: live.to_vec(),
        });
    };
    let deepest: Vec<&(&LiveSetRecord, &Path)> = matches
        .iter()
        .filter(|(_, root)| root.components().count() == depth)
        .collect();
    match deepest.as_slice() {
        [(record, _)] => Ok(record),
        many => Err(LookupError::Ambiguous {
            root: many[0].1.to_owned(),
            sets: many.iter().map(|(record, _)| (*record).clone()).collect(),
        }),
    }
}

/// A server of the live set that serves a project: its socket and the token file beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectEndpoint {
    /// The server's socket.
    pub socket: PathBuf,
    /// The set's token file.
    pub token_file: PathBuf,
}

/// Where `server` of the live set that serves `directory` (absolute, canonical where it
/// exists) listens now, read from the per-user registry; the error names what was found
/// instead. Both bridges (the native `ide-mcp bridge --project` and the Java `StdioBridge
/// --project`) ask this, so they find the same set.
pub fn endpoint_for_project(
    directory: &Path,
    server: ServerName,
) -> Result<ProjectEndpoint, String> {
    let listing = list_live_sets().map_err(|error| error.to_string())?;
    let record = find_for_project(&listing.live, directory).map_err(|error| error.to_string())?;
    if !record.serves(server) {
        return Err(format!(
            "the server set serving {} (pid {}, sockets in {}) has no `{server}` server; it \
             serves: {}",
            directory.display(),
            record.pid,
            record.socket_directory.display(),
            if record.servers.is_empty() {
                "none yet".to_owned()
            } else {
                record.servers.join(", ")
            }
        ));
    }
    Ok(ProjectEndpoint {
        socket: record.socket_path(server),
        token_file: record.socket_directory.join(TOKEN_FILE_NAME),
    })
}

/// `directory` made absolute, and canonical when it exists (the registry holds canonical
/// roots).
pub fn absolute_project_directory(directory: &Path) -> Result<PathBuf, String> {
    if let Ok(canonical) = std::fs::canonicalize(directory) {
        return Ok(canonical);
    }
    if directory.is_absolute() {
        return Ok(directory.to_owned());
    }
    std::env::current_dir()
        .map(|current| current.join(directory))
        .map_err(|error| format!("cannot make {} absolute: {error}", directory.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::live_sets::RECORD_FORMAT;

    fn set(pid: i32, roots: &[&str]) -> LiveSetRecord {
        LiveSetRecord {
            format: RECORD_FORMAT,
            project_roots: roots.iter().map(PathBuf::from).collect(),
            socket_directory: format!("/tmp/claude-ide-mcp/{pid}").into(),
            servers: vec!["code".into()],
            pid,
            pid_start_time: 1,
            host: "h".into(),
            started_at: 0,
        }
    }

    #[test]
    fn nested_projects_go_to_the_deepest_root() {
        let live = [set(1, &["/w"]), set(2, &["/w/inner"])];
        assert_eq!(
            find_for_project(&live, Path::new("/w/inner/src"))
                .unwrap()
                .pid,
            2
        );
        assert_eq!(
            find_for_project(&live, Path::new("/w/inner")).unwrap().pid,
            2
        );
        assert_eq!(
            find_for_project(&live, Path::new("/w/other")).unwrap().pid,
            1
        );
    }

    #[test]
    fn no_match_and_two_sets_for_one_root_name_what_was_found() {
        let live = [set(1, &["/a"]), set(2, &["/a"]), set(3, &["/b"])];
        let error = find_for_project(&live, Path::new("/a/x")).unwrap_err();
        let text = error.to_string();
        assert!(matches!(error, LookupError::Ambiguous { .. }), "{text}");
        assert!(
            text.contains("pid 1") && text.contains("pid 2") && !text.contains("pid 3"),
            "{text}"
        );
        let error = find_for_project(&live, Path::new("/c")).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("/c") && text.contains("/b: pid 3"), "{text}");
        let text = find_for_project(&[], Path::new("/c"))
            .unwrap_err()
            .to_string();
        assert!(text.contains("no server set is running"), "{text}");
    }
}
