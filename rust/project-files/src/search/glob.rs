//! The glob of `find_files` and `search_text`: without a `/` it matches a file's name
//! anywhere (`*.rs`); with one it matches the path from the project root
//! (`src/**/*.java`), where `**/` also matches no directory at all. `*` never crosses a `/`.

use globset::{GlobBuilder, GlobMatcher};

use crate::error::{Error, Result};

/// A compiled glob over paths relative to the root.
#[derive(Clone, Debug)]
pub(crate) struct PathGlob {
    matcher: Option<GlobMatcher>,
    by_name: bool,
}

impl PathGlob {
    /// `None` or empty: everything matches.
    pub(crate) fn new(glob: Option<&str>) -> Result<Self> {
        let Some(glob) = glob.filter(|glob| !glob.is_empty()) else {
            return Ok(PathGlob {
                matcher: None,
                by_name: true,
            });
        };
        let compiled = GlobBuilder::new(glob)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|error| Error::BadGlob(error.kind().to_string()))?;
        Ok(PathGlob {
            matcher: Some(compiled.compile_matcher()),
            by_name: !glob.contains('/'),
        })
    }

    /// Whether `relative` (`/`-separated) matches.
    pub(crate) fn matches(&self, relative: &str) -> bool {
        let Some(matcher) = &self.matcher else {
            return true;
        };
        if self.by_name {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            matcher.is_match(name)
        } else {
            matcher.is_match(relative)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_anywhere_and_paths_from_the_root() {
        let by_name = PathGlob::new(Some("*.rs")).expect("glob");
        assert!(by_name.matches("main.rs") && by_name.matches("src/deep/lib.rs"));
        assert!(!by_name.matches("src/lib.rsx"));
        let by_path = PathGlob::new(Some("src/**/*.java")).expect("glob");
        assert!(by_path.matches("src/a/B.java") && by_path.matches("src/B.java"));
        assert!(!by_path.matches("test/src/B.java"));
        let leading = PathGlob::new(Some("**/*.rs")).expect("glob");
        assert!(leading.matches("main.rs") && leading.matches("a/b.rs"));
        let star = PathGlob::new(Some("src/*.rs")).expect("glob");
        assert!(!star.matches("src/a/b.rs"));
        assert!(PathGlob::new(Some("a[")).is_err());
        assert!(PathGlob::new(None).expect("none").matches("anything"));
    }
}
