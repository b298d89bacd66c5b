//! `search_text`: the lines of the project's files that match a Rust regex.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use grep_matcher::{LineTerminator, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::WalkState;

use super::glob::PathGlob;
use super::walk::{relative_to, walker};
use super::{Halt, Stop};
use crate::confine::RelativePath;
use crate::credentials;
use crate::error::{Error, Result};
use crate::files::{refuse_by_name, Credentials, ProjectFiles};

/// The compiled pattern may take this much memory (the regex crate's limit is 10 MiB); a
/// larger one is refused with the regex crate's own message.
const PATTERN_SIZE_LIMIT: usize = 2 * 1024 * 1024;
/// The lazy DFA's cache per search thread.
const DFA_CACHE_LIMIT: usize = 8 * 1024 * 1024;
/// A reported line is cut to about this many characters around its match.
pub const MAX_MATCH_LINE_CHARS: usize = 300;

/// What to search for, and where.
#[derive(Clone, Debug)]
pub struct SearchRequest<'a> {
    /// A Rust regex (the `regex` crate's syntax), matched line by line.
    pub pattern: &'a str,
    /// Match case-insensitively.
    pub ignore_case: bool,
    /// Only files whose path matches this glob.
    pub glob: Option<&'a str>,
    /// Only under this directory, or in this file (relative to the root; empty: everything).
    pub path: &'a str,
    /// The most matching lines to return; past it the outcome says `truncated`.
    pub max_matches: usize,
    /// Larger files are skipped.
    pub max_file_bytes: u64,
    /// Whether withheld files may be searched.
    pub credentials: Credentials,
    /// Search threads (0: as many as the machine has).
    pub threads: usize,
}

/// One matching line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextMatch {
    /// The file, relative to the root.
    pub path: String,
    /// The line number (1-based).
    pub line: u64,
    /// The line (cut around the match when long; invalid UTF-8 replaced).
    pub text: String,
}

/// What a search found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchOutcome {
    /// The matching lines, by path and line.
    pub matches: Vec<TextMatch>,
    /// Files searched.
    pub files_searched: usize,
    /// Files not searched: binary, too large, unreadable, or leading outside the root.
    pub files_skipped: usize,
    /// Files withheld by the credential rule (by name, or by content when they matched).
    pub files_withheld: usize,
    /// More lines matched than `max_matches`.
    pub truncated: bool,
    /// The deadline passed: what was found until then.
    pub timed_out: bool,
}

/// Searches the project's files for `request.pattern`. A raised cancel flag is
/// `Error::Cancelled`; the deadline gives what was found so far, `timed_out` set.
pub fn search_text(
    files: &ProjectFiles,
    request: &SearchRequest<'_>,
    stop: &Stop,
) -> Result<SearchOutcome> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.ignore_case)
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .crlf(true)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(DFA_CACHE_LIMIT)
        .build(request.pattern)
        .map_err(|error| Error::BadPattern(error.to_string()))?;
    let glob = PathGlob::new(request.glob)?;
    let base = RelativePath::parse(request.path)?;
    let walk = walker(files, &base, request.threads)?;
    let shared = Shared {
        files,
        request,
        stop,
        matcher: &matcher,
        glob: &glob,
        outcome: Mutex::new(SearchOutcome::default()),
        full: AtomicBool::new(false),
        halt: Mutex::new(None),
    };
    walk.run(|| {
        let mut worker = Worker {
            shared: &shared,
            searcher: SearcherBuilder::new()
                .line_number(true)
                .line_terminator(LineTerminator::crlf())
                .binary_detection(BinaryDetection::quit(0))
                .build(),
            captured: Vec::new(),
        };
        Box::new(move |entry| worker.visit(entry))
    });
    let halt = *lock(&shared.halt);
    let mut outcome = shared
        .outcome
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    match halt {
        Some(Halt::Cancelled) => return Err(Error::Cancelled),
        Some(Halt::Deadline) => outcome.timed_out = true,
        None => {}
    }
    outcome
        .matches
        .sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    Ok(outcome)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What every search thread shares.
struct Shared<'a> {
    files: &'a ProjectFiles,
    request: &'a SearchRequest<'a>,
    stop: &'a Stop,
    matcher: &'a RegexMatcher,
    glob: &'a PathGlob,
    outcome: Mutex<SearchOutcome>,
    /// Set once `max_matches` lines were found.
    full: AtomicBool,
    halt: Mutex<Option<Halt>>,
}

/// What one file came to.
enum FileResult {
    Searched(Vec<TextMatch>),
    Skipped,
    Withheld,
    Halted(Halt),
}

/// One search thread.
struct Worker<'s, 'a> {
    shared: &'s Shared<'a>,
    searcher: Searcher,
    /// The bytes of the file being searched, for the credential rule once it matched.
    captured: Vec<u8>,
}

impl Worker<'_, '_> {
    fn visit(&mut self, entry: std::result::Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        let shared = self.shared;
        if let Some(halt) = shared.stop.halted() {
            *lock(&shared.halt) = Some(halt);
            return WalkState::Quit;
        }
        if shared.full.load(Ordering::Relaxed) {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            return WalkState::Continue;
        }
        let Some(relative) = relative_to(shared.files.root(), entry.path()) else {
            lock(&shared.outcome).files_skipped += 1;
            return WalkState::Continue;
        };
        let joined = relative.joined();
        if !shared.glob.matches(&joined) {
            return WalkState::Continue;
        }
        let result = self.search_file(&relative, joined);
        let mut outcome = lock(&shared.outcome);
        match result {
            FileResult::Searched(matches) => {
                outcome.files_searched += 1;
                let room = shared
                    .request
                    .max_matches
                    .saturating_sub(outcome.matches.len());
                if matches.len() > room {
                    outcome.truncated = true;
                    shared.full.store(true, Ordering::Relaxed);
                }
                outcome.matches.extend(matches.into_iter().take(room));
                if outcome.truncated {
                    return WalkState::Quit;
                }
            }
            FileResult::Skipped => outcome.files_skipped += 1,
            FileResult::Withheld => outcome.files_withheld += 1,
            FileResult::Halted(halt) => {
                *lock(&shared.halt) = Some(halt);
                return WalkState::Quit;
            }
        }
        WalkState::Continue
    }

    fn search_file(&mut self, relative: &RelativePath, joined: String) -> FileResult {
        let shared = self.shared;
        let withhold = shared.request.credentials == Credentials::Withhold;
        if withhold && refuse_by_name(relative).is_err() {
            return FileResult::Withheld;
        }
        let Ok((file, size)) = shared.files.confined().open_file(relative) else {
            return FileResult::Skipped;
        };
        if size > shared.request.max_file_bytes {
            return FileResult::Skipped;
        }
        self.captured.clear();
        let mut reader = WatchedReader {
            inner: file.take(shared.request.max_file_bytes),
            stop: shared.stop,
            capture: withhold.then_some(&mut self.captured),
        };
        let mut sink = Collector {
            matcher: shared.matcher,
            path: joined,
            // One more than fits, to know that there was more.
            limit: shared.request.max_matches.saturating_add(1),
            matches: Vec::new(),
            binary: false,
        };
        let searched = self
            .searcher
            .search_reader(shared.matcher, &mut reader, &mut sink);
        if let Some(halt) = shared.stop.halted() {
            return FileResult::Halted(halt);
        }
        if searched.is_err() || sink.binary {
            return FileResult::Skipped;
        }
        if withhold && !sink.matches.is_empty() {
            // The rule looks at the whole file, also past the last line the search needed.
            let drained = reader.read_to_end(&mut Vec::new());
            drop(reader);
            if drained.is_err() {
                return match shared.stop.halted() {
                    Some(halt) => FileResult::Halted(halt),
                    None => FileResult::Skipped,
                };
            }
            if credentials::find_in_content(&self.captured).is_some() {
                return FileResult::Withheld;
            }
        }
        FileResult::Searched(sink.matches)
    }
}

/// Reads a file for the searcher: checks the stop before every read (so a large file stops
/// within one buffer), and keeps a copy of the bytes for the credential rule.
struct WatchedReader<'a, R> {
    inner: R,
    stop: &'a Stop,
    capture: Option<&'a mut Vec<u8>>,
}

impl<R: Read> Read for WatchedReader<'_, R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        if self.stop.halted().is_some() {
            return Err(io::Error::other("the search was stopped"));
        }
        let read = self.inner.read(buffer)?;
        if let Some(capture) = self.capture.as_deref_mut() {
            capture.extend_from_slice(&buffer[..read]);
        }
        Ok(read)
    }
}

/// Collects the matching lines of one file.
struct Collector<'a> {
    matcher: &'a RegexMatcher,
    path: String,
    limit: usize,
    matches: Vec<TextMatch>,
    binary: bool,
}

impl Sink for Collector<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> io::Result<bool> {
        let mut line = found.bytes();
        line = line.strip_suffix(b"\n").unwrap_or(line);
        line = line.strip_suffix(b"\r").unwrap_or(line);
        let at = self
            .matcher
            .find(line)
            .ok()
            .flatten()
            .map_or(0, |found| found.start());
        self.matches.push(TextMatch {
            path: self.path.clone(),
            line: found.line_number().unwrap_or(0),
            text: excerpt(line, at),
        });
        Ok(self.matches.len() < self.limit)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> io::Result<bool> {
        self.binary = true;
        Ok(false)
    }
}

/// The line, or about [`MAX_MATCH_LINE_CHARS`] characters of it around byte `at`.
fn excerpt(line: &[u8], at: usize) -> String {
    let text = String::from_utf8_lossy(line);
    let count = text.chars().count();
    if count <= MAX_MATCH_LINE_CHARS {
        return text.into_owned();
    }
    let at_char = String::from_utf8_lossy(&line[..at.min(line.len())])
        .chars()
        .count();
    let from = at_char
        .saturating_sub(MAX_MATCH_LINE_CHARS / 3)
        .min(count - MAX_MATCH_LINE_CHARS);
    let mut cut: String = text.chars().skip(from).take(MAX_MATCH_LINE_CHARS).collect();
    if from > 0 {
        cut.insert(0, '…');
    }
    cut.push('…');
    cut
}
