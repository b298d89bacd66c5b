//! The line scanner: the lexical pass that turns text into structural lines.
//!
//! It works on byte offsets into the original text and never copies a line.
//! Comment lines (`#` after spaces only) and blank lines are dropped here; blank
//! line numbers are remembered because strict mode forbids them inside arrays.
//! Strict indentation rules (no tabs, exact multiples) are enforced as lines
//! are read, so errors surface in document order.

use super::byte_search::{find_byte, run_length};
use super::error::DecodeError;

/// One structural line: offsets into the text, and its indentation depth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset where the raw line starts (for column numbers).
    pub start: usize,
    /// Byte offset of the first content byte, after indentation.
    pub content: usize,
    /// Byte offset just past the content, trailing spaces and CR excluded.
    pub end: usize,
    /// Indentation depth in indent units.
    pub depth: usize,
}

pub(crate) struct Lines<'t> {
    text: &'t str,
    /// Offset of the next raw line; `None` once the text is exhausted.
    next_start: Option<usize>,
    number: usize,
    indent: usize,
    /// `log2(indent)` when the indent is a power of two (2, the default, is): depths are
    /// then a shift and a mask rather than a division, which takes tens of cycles per line.
    indent_shift: Option<u32>,
    strict: bool,
    peeked: Option<Line>,
    /// Line numbers of blank lines seen so far, in order.
    pub blank_lines: Vec<usize>,
    /// Number of the last line handed out by [`Lines::next`].
    pub last_consumed: usize,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str, indent: usize, strict: bool) -> Self {
        // A leading byte-order mark is not content.
        let first = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Self {
            text,
            next_start: Some(first),
            number: 0,
            indent,
            indent_shift: indent.is_power_of_two().then(|| indent.trailing_zeros()),
            strict,
            peeked: None,
            blank_lines: Vec::new(),
            last_consumed: 0,
        }
    }

    /// Bytes not yet scanned: an upper bound for how many lines can follow.
    pub fn remaining_bytes(&self) -> usize {
        self.next_start
            .map_or(0, |start| self.text.len().saturating_sub(start))
    }

    /// The next structural line, left in place for [`Lines::advance`].
    #[inline]
    pub fn peek(&mut self) -> Result<Option<Line>, DecodeError> {
        if self.peeked.is_none() {
            self.peeked = self.scan()?;
        }
        Ok(self.peeked)
    }

    /// The next structural line, taken when `take` says so and left in place otherwise
    /// (`None` then, as at the end of the text).
    ///
    /// A line scanned here and taken at once never goes through `peeked`: most lines are
    /// taken by the first look at them, and storing each one there to copy it out again was
    /// a tenth of a line's cost.
    #[inline(always)]
    pub fn next_if(
        &mut self,
        take: impl FnOnce(&Line) -> bool,
    ) -> Result<Option<Line>, DecodeError> {
        let line = match self.peeked.take() {
            Some(line) => line,
            None => match self.scan()? {
                Some(line) => line,
                None => return Ok(None),
            },
        };
        if take(&line) {
            self.last_consumed = line.number;
            return Ok(Some(line));
        }
        self.peeked = Some(line);
        Ok(None)
    }

    /// Consumes the line the last [`Lines::peek`] returned.
    ///
    /// The decoder always looks at a line before it takes it, so taking it needs no
    /// second copy of it.
    #[inline]
    pub fn advance(&mut self) {
        if let Some(line) = self.peeked.take() {
            self.last_consumed = line.number;
        }
    }

    /// Reads raw lines until a structural one (or the end).
    ///
    /// Indentation is skipped first and the newline searched for from the content on, so
    /// each byte of a line is looked at once: at depth 6 a line's twelve leading spaces are
    /// a third of it.
    #[inline(always)]
    fn scan(&mut self) -> Result<Option<Line>, DecodeError> {
        let bytes = self.text.as_bytes();
        while let Some(start) = self.next_start {
            self.number += 1;
            // Spaces never run past the line's LF (or its CR), so this stays on the line.
            let after_spaces = skip_space_run(bytes, start);
            let (raw_end, next) = match find_byte(b'\n', &bytes[after_spaces..]) {
                Some(offset) => (after_spaces + offset, Some(after_spaces + offset + 1)),
                None => (bytes.len(), None),
            };
            self.next_start = next;
            let mut end = raw_end;
            // Most lines end in neither; one look at the last byte settles that.
            if end > after_spaces && matches!(bytes[end - 1], b'\r' | b' ') {
                // Exactly one CR before the LF belongs to a CRLF terminator.
                if bytes[end - 1] == b'\r' {
                    end -= 1;
                }
                while end > after_spaces && bytes[end - 1] == b' ' {
                    end -= 1;
                }
            }
            // `end` never goes below `after_spaces`: a line of spaces ends where they do.
            if end == after_spaces {
                self.blank_lines.push(self.number);
                continue;
            }
            let (content, depth) = match bytes[after_spaces] {
                b'#' => continue, // A comment: only spaces may precede its `#`.
                b'\t' => {
                    // Strict mode counts only the spaces before a tab as indentation, so
                    // the tab stays in the content and is reported by `depth_with_tabs`.
                    let content = if self.strict {
                        after_spaces
                    } else {
                        end_of_spaces_and_tabs(bytes, after_spaces, end)
                    };
                    if end == content {
                        self.blank_lines.push(self.number);
                        continue;
                    }
                    (
                        content,
                        self.depth_with_tabs(bytes, start, after_spaces, content)?,
                    )
                }
                _ => (after_spaces, self.depth_of_spaces(after_spaces - start)?),
            };
            return Ok(Some(Line {
                number: self.number,
                start,
                content,
                end,
                depth,
            }));
        }
        Ok(None)
    }

    /// The depth of `spaces` of indentation; strict mode wants an exact multiple.
    #[inline(always)]
    fn depth_of_spaces(&self, spaces: usize) -> Result<usize, DecodeError> {
        let (depth, misaligned) = match self.indent_shift {
            Some(shift) => (spaces >> shift, spaces & (self.indent - 1) != 0),
            None => (spaces / self.indent, !spaces.is_multiple_of(self.indent)),
        };
        if self.strict && misaligned {
            return Err(self.misaligned(spaces));
        }
        Ok(depth)
    }

    /// The error for indentation that is not a multiple of the indent (strict mode).
    #[cold]
    #[inline(never)]
    fn misaligned(&self, spaces: usize) -> DecodeError {
        DecodeError::new(
            self.number,
            1,
            format!(
                "indentation must be a multiple of {} spaces, found {spaces}",
                self.indent
            ),
        )
    }

    /// The depth of indentation with a tab at `tab`: an error in strict mode; lenient mode
    /// counts each tab as one level and the spaces in indent units.
    #[cold]
    fn depth_with_tabs(
        &self,
        bytes: &[u8],
        start: usize,
        tab: usize,
        content: usize,
    ) -> Result<usize, DecodeError> {
        if self.strict {
            return Err(DecodeError::new(
                self.number,
                tab - start + 1,
                "tabs are not allowed in indentation in strict mode",
            ));
        }
        let tabs = bytes[start..content]
            .iter()
            .filter(|&&b| b == b'\t')
            .count();
        Ok((content - start - tabs) / self.indent + tabs)
    }
}

/// The end of the run of spaces that starts at `from`.
#[inline]
fn skip_space_run(bytes: &[u8], from: usize) -> usize {
    from + run_length(b' ', &bytes[from..])
}

/// The end of the run of spaces and tabs from `from` (a tab) up to `end`.
fn end_of_spaces_and_tabs(bytes: &[u8], from: usize, end: usize) -> usize {
    let mut lead = from;
    while lead < end && matches!(bytes[lead], b' ' | b'\t') {
        lead += 1;
    }
    lead
}

#[cfg(test)]
mod tests {
    use super::*;

    fn structural(text: &str, strict: bool) -> Vec<(usize, usize, String)> {
        let mut lines = Lines::new(text, 2, strict);
        let mut out = Vec::new();
        while let Some(line) = lines.next().expect("valid") {
            out.push((
                line.number,
                line.depth,
                text[line.content..line.end].to_owned(),
            ));
        }
        out
    }

    #[test]
    fn whitespace_only_lines_are_blank_whatever_ends_them() {
        let text = "a:\n    \r\n  \n\n  b: 1\n          ";
        let mut lines = Lines::new(text, 2, true);
        let mut found = Vec::new();
        while let Some(line) = lines.next().expect("valid") {
            found.push((line.number, line.depth));
        }
        assert_eq!(found, vec![(1, 0), (5, 1)]);
        assert_eq!(lines.blank_lines, vec![2, 3, 4, 6]);
        // A tab after the spaces of a blank line is still a tab in indentation.
        let error = Lines::new("a:\n  \t\r\n", 2, true)
            .nth(2)
            .expect_err("tab in indentation");
        assert_eq!((error.line(), error.column()), (2, 3));
    }

    #[test]
    fn comments_blanks_crlf_and_bom() {
        let text = "\u{feff}a: 1\r\n# c\n\n   \n  b: 2  \r\n  # indented comment\n";
        assert_eq!(
            structural(text, true),
            vec![(1, 0, "a: 1".to_owned()), (5, 1, "b: 2".to_owned())]
        );
    }

    #[test]
    fn tabs_are_content_not_comments() {
        assert!(Lines::new("a: 1\n\t# x", 2, true).nth_error(2));
        assert_eq!(
            structural("x:\n\t#y", false),
            vec![(1, 0, "x:".to_owned()), (2, 1, "#y".to_owned())]
        );
    }

    #[test]
    fn long_indentation_and_tabs_after_spaces() {
        // 18 spaces: two eight-byte chunks and a tail.
        let text = format!("a:\n{}b: 1", " ".repeat(18));
        assert_eq!(
            structural(&text, true),
            vec![(1, 0, "a:".to_owned()), (2, 9, "b: 1".to_owned())]
        );
        // Lenient: ten spaces (five levels) then a tab (one more) then a space.
        let text = format!("a:\n{}\t b", " ".repeat(10));
        assert_eq!(
            structural(&text, false),
            vec![(1, 0, "a:".to_owned()), (2, 6, "b".to_owned())]
        );
        // Strict: the tab is reported at its own column.
        let error = Lines::new(&text, 2, true)
            .nth(2)
            .expect_err("tab in indentation");
        assert_eq!((error.line(), error.column()), (2, 11));
    }

    #[test]
    fn depths_for_every_indent_width() {
        for indent in [1, 2, 3, 4, 8] {
            let text = format!(
                "a:\n{}b:\n{}c: 1",
                " ".repeat(indent),
                " ".repeat(2 * indent)
            );
            let mut lines = Lines::new(&text, indent, true);
            let mut found = Vec::new();
            while let Some(line) = lines.next().expect("aligned") {
                found.push(line.depth);
            }
            assert_eq!(found, vec![0, 1, 2], "indent {indent}");
            if indent > 1 {
                let misaligned = format!("a:\n{}b: 1", " ".repeat(indent + 1));
                let error = Lines::new(&misaligned, indent, true)
                    .nth(2)
                    .expect_err("not a multiple");
                assert_eq!((error.line(), error.column()), (2, 1), "indent {indent}");
                // Lenient mode rounds down.
                let mut lenient = Lines::new(&misaligned, indent, false);
                lenient.next().expect("first");
                let line = lenient.next().expect("lenient").expect("a line");
                assert_eq!(line.depth, 1, "indent {indent}");
            }
        }
    }

    impl Lines<'_> {
        fn next(&mut self) -> Result<Option<Line>, DecodeError> {
            let line = self.peek()?;
            self.advance();
            Ok(line)
        }

        fn nth(mut self, count: usize) -> Result<(), DecodeError> {
            for _ in 0..count {
                self.next()?;
            }
            Ok(())
        }

        fn nth_error(mut self, count: usize) -> bool {
            for _ in 0..count {
                if self.next().is_err() {
                    return true;
                }
            }
            false
        }
    }
}
