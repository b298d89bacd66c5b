//! `ProjectFiles`: the project root held open, and the file operations of the tools — read a
//! file or a range of its lines, list a directory, stat — each through the confined open and
//! under the credential rule.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::confine::{Entry, RelativePath, Resolver, Root};
use crate::credentials;
use crate::error::{Error, Result};

/// How many bytes of a file are looked at for a NUL byte to call it binary.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// The project directory, opened once; every path below is relative to it.
#[derive(Debug)]
pub struct ProjectFiles {
    root: Root,
    path: PathBuf,
}

/// Whether the caller may see what the credential rule withholds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Credentials {
    /// Withhold them (the default).
    #[default]
    Withhold,
    /// The Security Guard answered `AllowExplicitly` for this call: let them through.
    ExplicitlyAllowed,
}

/// The limits of one read.
#[derive(Clone, Copy, Debug)]
pub struct ReadLimits {
    /// Larger files are never read.
    pub max_file_bytes: u64,
    /// Larger files are read only in line ranges.
    pub max_whole_bytes: u64,
    /// The most text one answer holds; the rest is left for the next range.
    pub max_content_bytes: usize,
}

impl Default for ReadLimits {
    fn default() -> Self {
        ReadLimits {
            max_file_bytes: 32 * 1024 * 1024,
            max_whole_bytes: 256 * 1024,
            max_content_bytes: 200 * 1024,
        }
    }
}

/// Lines read from a text file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lines {
    /// How many lines the file has.
    pub total_lines: usize,
    /// The first line returned (1-based).
    pub start_line: usize,
    /// The last line returned (`start_line - 1` when none).
    pub end_line: usize,
    /// Set when the answer stopped before the requested end to stay small.
    pub truncated: bool,
    /// The lines, each ending in `\n` (a `\r` before it removed).
    pub content: String,
}

impl ProjectFiles {
    /// Opens `root` (an existing directory; its own path is trusted, everything under it not).
    pub fn open(root: &Path) -> Result<Self> {
        Self::open_with(root, Resolver::Native)
    }

    /// Like [`ProjectFiles::open`], but every open uses the portable `openat(O_NOFOLLOW)`
    /// walk, as on the Unixes without `openat2`: so both can be tested on Linux.
    pub fn open_with_portable_walk(root: &Path) -> Result<Self> {
        Self::open_with(root, Resolver::Walk)
    }

    fn open_with(root: &Path, resolver: Resolver) -> Result<Self> {
        let path = std::fs::canonicalize(root)
            .map_err(|error| Error::io(&root.display().to_string(), error))?;
        let opened = Root::open(&path, resolver)
            .map_err(|error| Error::io(&path.display().to_string(), error))?;
        Ok(ProjectFiles { root: opened, path })
    }

    /// The root's canonical path.
    pub fn root(&self) -> &Path {
        &self.path
    }

    pub(crate) fn confined(&self) -> &Root {
        &self.root
    }

    /// Reads a text file, whole or the lines `start..=end` (1-based; `None`: from the first,
    /// to the last). Refuses what is not a regular file, larger than the limits, binary, not
    /// UTF-8, or a credential (by name or content) unless `credentials` allows it.
    pub fn read_lines(
        &self,
        path: &str,
        start: Option<usize>,
        end: Option<usize>,
        limits: ReadLimits,
        credentials: Credentials,
    ) -> Result<Lines> {
        let path = RelativePath::parse(path)?;
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                return Err(Error::BadRange(format!(
                    "`endLine` ({end}) is before `startLine` ({start})"
                )));
            }
        }
        if credentials == Credentials::Withhold {
            refuse_by_name(&path)?;
        }
        let (file, size) = self.root.open_file(&path)?;
        if size > limits.max_file_bytes {
            return Err(Error::TooLarge {
                path: path.display,
                size,
                what: format!(
                    "too large to read (the limit is {} bytes); search_text finds lines in it",
                    limits.max_file_bytes
                ),
            });
        }
        let ranged = start.is_some() || end.is_some();
        if !ranged && size > limits.max_whole_bytes {
            return Err(Error::TooLarge {
                path: path.display,
                size,
                what: "read it in parts with startLine and endLine (e.g. startLine 1, endLine \
                       2000), or use search_text to find the lines you need"
                    .to_owned(),
            });
        }
        let bytes = read_at_most(file, limits.max_file_bytes, &path.display)?;
        let sniffed = &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)];
        if sniffed.contains(&0) {
            return Err(Error::Binary {
                path: path.display,
                size,
            });
        }
        if credentials == Credentials::Withhold {
            if let Some(finding) = credentials::find_in_content(&bytes) {
                return Err(Error::Credential {
                    path: path.display,
                    why: format!("holds {} (line {})", finding.kind, finding.line),
                });
            }
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| Error::NotUtf8(path.display.clone()))?;
        select_lines(&path.display, text, start, end, limits.max_content_bytes)
    }

    /// The entries of a directory, sorted by name, at most `max_entries` of them; the second
    /// value is how many there are in all. Names are shown even of credential files.
    pub fn list_directory(&self, path: &str, max_entries: usize) -> Result<(Vec<Entry>, usize)> {
        let path = RelativePath::parse(path)?;
        let mut entries = self.root.list(&path)?;
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let total = entries.len();
        entries.truncate(max_entries);
        Ok((entries, total))
    }

    /// What is at `path`, without following a link in last place.
    pub fn stat(&self, path: &str) -> Result<Entry> {
        self.root.stat(&RelativePath::parse(path)?)
    }
}

/// The credential rule by name, for a path about to be read.
pub(crate) fn refuse_by_name(path: &RelativePath) -> Result<()> {
    match credentials::kind_by_name(Path::new(&path.joined())) {
        Some(kind) => Err(Error::Credential {
            path: path.display.clone(),
            why: format!("is {kind}"),
        }),
        None => Ok(()),
    }
}

/// Reads at most `limit` bytes (a file growing while read stops there).
fn read_at_most(file: std::fs::File, limit: u64, path: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|error| Error::io(path, error))?;
    Ok(bytes)
}

fn select_lines(
    path: &str,
    text: &str,
    start: Option<usize>,
    end: Option<usize>,
    max_bytes: usize,
) -> Result<Lines> {
    let lines: Vec<&str> = if text.is_empty() {
        Vec::new()
    } else {
        text.strip_suffix('\n')
            .unwrap_or(text)
            .split('\n')
            .collect()
    };
    let total = lines.len();
    let first = start.unwrap_or(1).max(1);
    let last = end.map_or(total, |end| end.min(total));
    if total > 0 && first > total {
        return Err(Error::BadRange(format!(
            "`{path}` has {total} lines; startLine {first} is past the end"
        )));
    }
    let mut content = String::new();
    let mut included = first - 1;
    for number in first..=last {
        let line = lines[number - 1];
        let line = line.strip_suffix('\r').unwrap_or(line);
        if content.len() + line.len() + 1 > max_bytes && number > first {
            break;
        }
        content.push_str(line);
        content.push('\n');
        included = number;
    }
    Ok(Lines {
        total_lines: total,
        start_line: first,
        end_line: included,
        truncated: included < last,
        content,
    })
}
