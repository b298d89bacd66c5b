//! The walk shared by `search_text` and `find_files`: ripgrep's `ignore` walker over the
//! directory to search, with its paths turned back into paths relative to the root, which
//! is how every file is then opened (confined).

use std::path::Path;

use ignore::{WalkBuilder, WalkParallel};

use crate::confine::{EntryKind, RelativePath};
use crate::error::{Error, Result};
use crate::files::ProjectFiles;

/// The walker over `base` (relative to the root: a directory or one file), on `threads`
/// threads (0: as many as the machine has, up to ignore's own cap).
pub(crate) fn walker(
    files: &ProjectFiles,
    base: &RelativePath,
    threads: usize,
) -> Result<WalkParallel> {
    let entry = files.confined().stat(base)?;
    if entry.kind == EntryKind::Symlink {
        return Err(Error::Escapes(base.display.clone()));
    }
    let start = files.root().join(base.components.join("/"));
    Ok(WalkBuilder::new(start)
        .hidden(false)
        .follow_links(false)
        .threads(threads)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build_parallel())
}

/// `path` (found by the walk) relative to `root`, `/`-separated; `None` when it is not
/// under the root or its name is not UTF-8 (it could not be named to the model anyway).
pub(crate) fn relative_to(root: &Path, path: &Path) -> Option<RelativePath> {
    let relative = path.strip_prefix(root).ok()?;
    let mut joined = String::new();
    for component in relative.components() {
        let name = component.as_os_str().to_str()?;
        if !joined.is_empty() {
            joined.push('/');
        }
        joined.push_str(name);
    }
    RelativePath::parse(&joined).ok()
}
