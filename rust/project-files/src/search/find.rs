//! `find_files`: the project's files whose path matches a glob.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use ignore::WalkState;

use super::glob::PathGlob;
use super::walk::{relative_to, walker};
use super::{Halt, Stop};
use crate::confine::RelativePath;
use crate::credentials::{self, FIND_SCAN_BYTES};
use crate::error::{Error, Result};
use crate::files::{refuse_by_name, Credentials, ProjectFiles};

/// Which files to find.
#[derive(Clone, Debug)]
pub struct FindRequest<'a> {
    /// The glob (see the crate's documentation of globs); empty: every file.
    pub glob: &'a str,
    /// Only under this directory (relative to the root; empty: everything).
    pub path: &'a str,
    /// The most paths to return; past it the outcome says `truncated`.
    pub max_results: usize,
    /// Whether withheld files may be listed.
    pub credentials: Credentials,
    /// Walk threads (0: as many as the machine has).
    pub threads: usize,
}

/// What a find found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FindOutcome {
    /// Matching files, relative to the root, sorted.
    pub files: Vec<String>,
    /// Matching files withheld by the credential rule.
    pub files_withheld: usize,
    /// More files matched than `max_results`.
    pub truncated: bool,
    /// The deadline passed: what was found until then.
    pub timed_out: bool,
}

/// Finds the files under `request.path` whose path matches `request.glob`. Each match is
/// opened (confined) and the first [`FIND_SCAN_BYTES`] of it pass the credential rule, so
/// what `read_file` would refuse is counted, not listed; one that cannot be opened beneath
/// the root is left out.
pub fn find_files(
    files: &ProjectFiles,
    request: &FindRequest<'_>,
    stop: &Stop,
) -> Result<FindOutcome> {
    let glob = PathGlob::new(Some(request.glob))?;
    let base = RelativePath::parse(request.path)?;
    let walk = walker(files, &base, request.threads)?;
    let outcome = Mutex::new(FindOutcome::default());
    let halt = Mutex::new(None);
    let full = AtomicBool::new(false);
    let withhold = request.credentials == Credentials::Withhold;
    walk.run(|| {
        let (outcome, halt, full, glob) = (&outcome, &halt, &full, &glob);
        let mut scanned = Vec::new();
        Box::new(move |entry| {
            if let Some(reason) = stop.halted() {
                *lock(halt) = Some(reason);
                return WalkState::Quit;
            }
            if full.load(Ordering::Relaxed) {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            let Some(relative) = relative_to(files.root(), entry.path()) else {
                return WalkState::Continue;
            };
            let joined = relative.joined();
            if !glob.matches(&joined) {
                return WalkState::Continue;
            }
            let Ok((file, _size)) = files.confined().open_file(&relative) else {
                return WalkState::Continue;
            };
            let withheld = withhold && {
                scanned.clear();
                refuse_by_name(&relative).is_err()
                    || (file
                        .take(FIND_SCAN_BYTES as u64)
                        .read_to_end(&mut scanned)
                        .is_ok()
                        && credentials::find_in_content(&scanned).is_some())
            };
            let mut found = lock(outcome);
            if withheld {
                found.files_withheld += 1;
            } else if found.files.len() >= request.max_results {
                found.truncated = true;
                full.store(true, Ordering::Relaxed);
                return WalkState::Quit;
            } else {
                found.files.push(joined);
            }
            WalkState::Continue
        })
    });
    let halted = *lock(&halt);
    let mut found = outcome
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match halted {
        Some(Halt::Cancelled) => return Err(Error::Cancelled),
        Some(Halt::Deadline) => found.timed_out = true,
        None => {}
    }
    found.files.sort();
    Ok(found)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
