//! Reading the registry: every record of a live set, with bounded work whatever the directory
//! holds, and the records of sets that are gone removed on the way.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::platform::fs::{self, file_type, FileType, Stat};
use crate::process_info::ProcessIdentity;
use crate::runtime_dir::{fstat, list_dir};

use super::directory::{registry_path, RegistryDir};
use super::record::LiveSetRecord;
use super::{LiveSetsError, MAX_RECORD_BYTES, MAX_REGISTRY_ENTRIES, RECORD_SUFFIX};

/// What a reading of the registry found.
#[derive(Debug, Default)]
pub struct Listing {
    /// The registry directory.
    pub directory: PathBuf,
    /// The records of live sets, oldest first.
    pub live: Vec<LiveSetRecord>,
    /// The records removed because their process is gone or its pid was reused.
    pub removed_stale: Vec<String>,
    /// Entries that are not records this code reads, and why; they are left alone.
    pub ignored: Vec<Ignored>,
}

/// An entry of the registry that was not read as a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ignored {
    /// Its file name (lossy when not UTF-8).
    pub name: String,
    /// Why it was ignored.
    pub reason: String,
}

/// Reads the registry [`registry_path`] names. A registry that does not exist yet has no sets;
/// one that fails its checks is an error that says why.
pub fn list_live_sets() -> Result<Listing, LiveSetsError> {
    list_live_sets_in(&registry_path()?)
}

/// Like [`list_live_sets`], in the registry directory `path`.
pub fn list_live_sets_in(path: &Path) -> Result<Listing, LiveSetsError> {
    match RegistryDir::open_existing(path)? {
        Some(dir) => scan(&dir),
        None => Ok(Listing {
            directory: path.to_owned(),
            ..Listing::default()
        }),
    }
}

/// Reads every record in `dir`, removing those of sets that are gone.
pub(super) fn scan(dir: &RegistryDir) -> Result<Listing, LiveSetsError> {
    let names = list_dir(&dir.fd, &dir.path).map_err(LiveSetsError::Directory)?;
    let mut listing = Listing {
        directory: dir.path.clone(),
        ..Listing::default()
    };
    if names.len() > MAX_REGISTRY_ENTRIES {
        listing.ignored.push(Ignored {
            name: dir.path.display().to_string(),
            reason: format!(
                "{} entries; only the first {MAX_REGISTRY_ENTRIES} were examined",
                names.len()
            ),
        });
    }
    for name in names.into_iter().take(MAX_REGISTRY_ENTRIES) {
        let shown = name.to_string_lossy().into_owned();
        match read_entry(dir, &name, &shown) {
            Entry::Skipped => {}
            Entry::Ignored(reason) => listing.ignored.push(Ignored {
                name: shown,
                reason,
            }),
            Entry::Record(record) => {
                let identity = ProcessIdentity {
                    pid: record.pid,
                    start_time: record.pid_start_time,
                };
                if identity.is_running() {
                    listing.live.push(record);
                } else {
                    // Ours (checked when read), and its process is gone or is another one now.
                    let _ = fs::unlink_at(&dir.fd, &name);
                    listing.removed_stale.push(shown);
                }
            }
        }
    }
    listing
        .live
        .sort_by_key(|record| (record.started_at, record.pid));
    Ok(listing)
}

enum Entry {
    /// Not meant to be read: a record being written.
    Skipped,
    Ignored(String),
    Record(LiveSetRecord),
}

/// One entry, looked at without following a link and read only when it is a small regular
/// file of ours.
fn read_entry(dir: &RegistryDir, name: &OsString, shown: &str) -> Entry {
    if shown.starts_with('.') {
        return Entry::Skipped;
    }
    if !shown.ends_with(RECORD_SUFFIX) {
        return Entry::Ignored(format!("not a record (no {RECORD_SUFFIX} suffix)"));
    }
    let stat = match fs::stat_at(&dir.fd, name) {
        Ok(stat) => stat,
        Err(errno) => return Entry::Ignored(format!("cannot inspect it: {errno}")),
    };
    if let Some(problem) = unreadable_because(&stat) {
        return Entry::Ignored(problem);
    }
    let Some(text) = name.to_str() else {
        return Entry::Ignored("its name is not UTF-8".to_owned());
    };
    let fd = match fs::open_read_at(&dir.fd, text) {
        Ok(fd) => fd,
        Err(errno) => return Entry::Ignored(format!("cannot open it: {errno}")),
    };
    // Checked again on the open file: what was inspected may have been replaced since.
    match fstat(&fd, &dir.path.join(text)) {
        Ok(stat) => {
            if let Some(problem) = unreadable_because(&stat) {
                return Entry::Ignored(problem);
            }
        }
        Err(error) => return Entry::Ignored(error.to_string()),
    }
    let mut bytes = Vec::new();
    if let Err(error) = fs::into_file(fd)
        .take(MAX_RECORD_BYTES + 1)
        .read_to_end(&mut bytes)
    {
        return Entry::Ignored(format!("cannot read it: {error}"));
    }
    match LiveSetRecord::from_json(&bytes) {
        Ok(record) => Entry::Record(record),
        Err(reason) => Entry::Ignored(reason),
    }
}

/// Why a file may not be read as a record: not a regular file (a symlink, a FIFO, a
/// directory), someone else's, or too large.
fn unreadable_because(stat: &Stat) -> Option<String> {
    let kind = file_type(stat);
    if kind != FileType::RegularFile {
        return Some(format!("a {kind:?}, not a regular file"));
    }
    if !fs::is_ours(stat) {
        return Some(format!("owned by {}, not by us", fs::describe_owner(stat)));
    }
    let size = fs::size(stat);
    if size > MAX_RECORD_BYTES {
        return Some(format!(
            "{size} bytes, over the limit of {MAX_RECORD_BYTES}"
        ));
    }
    None
}
