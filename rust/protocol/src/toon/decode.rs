//! The decoder: a single forward pass over the lines, building values with an
//! explicit stack of open containers instead of recursion.
//!
//! Objects and list-form arrays that span lines are frames on the stack; rows of
//! tabular arrays, keyed tables and inline arrays hold only primitives and are
//! decoded in place. The stack never grows past `max_depth`, and nothing is
//! recursive, so input of any shape decodes (or fails) on any thread stack.
//!
//! Duplicate keys are rejected in strict mode, the default and the only mode the servers
//! use: a guard and a handler must never see different values for one key. Non-strict mode,
//! on request, follows the spec's last-write-wins.

use serde_json::{Map, Value};

use super::byte_search::{find_any_of_three, find_either};
use super::error::DecodeError;
use super::header::{
    find_unquoted, find_unquoted2, parse_header, plain_header_at, skip_spaces, trim_spaces,
    FieldOp, Fields, Header,
};
use super::number::decode_number;
use super::options::{DecodeOptions, Delimiter};
use super::quote::decode_quoted;
use super::scan::{Line, Lines};
use crate::budget::{
    decode_budget, over_budget, Budget, DECODE_BYTES_PER_INPUT_BYTE, ENTRY_BYTES, NODE_BYTES,
};

/// Why [`Parser::try_insert`] refused a key.
enum InsertRefusal {
    /// The decode budget is spent.
    OverBudget,
    /// The object has the key already (strict mode).
    Duplicate,
}

/// Where a finished container goes.
enum Slot {
    Root,
    /// Into the enclosing object, under this key, read at this byte offset. An error about
    /// the key finds its line again from the offset ([`Parser::line_around`]): a frame carries
    /// its slot from its first line to its last, and a whole line in it made every frame a
    /// fifth larger to move.
    Key(String, usize),
    /// Appended to the enclosing list.
    Push,
}

enum Frame {
    Object {
        /// The object's map, made with room for as many entries as the last object closed
        /// at the same depth had, rounded up to its table's (see [`SizeGuesses`]).
        map: Map<String, Value>,
        /// The room it was made with.
        room: usize,
        slot: Slot,
        /// Lines shallower than this end the object.
        min_depth: usize,
        /// The depth its fields sit at; learnt from the first field when `None`.
        field_depth: Option<usize>,
    },
    List {
        items: Vec<Value>,
        slot: Slot,
        /// Depth of the header line; items sit deeper.
        base_depth: usize,
        item_depth: usize,
        declared: usize,
        header: Line,
        first_item_line: Option<usize>,
    },
}

/// How many entries to make an object's map with, by the depth of its frame: as many as
/// the last object closed at that depth had, rounded up by [`room_for`].
///
/// TOON gives no object's size before its lines, and growing a map entry by entry
/// reallocates its entry vector and hash table (4 -> 8 -> ...) and rehashes every key. Siblings
/// at one depth (the items of a list, the nodes of one level of a tree) tend to have the same
/// shape, so the last one's size is a good guess; a wrong one costs a growth, or room left
/// unused, which is charged to the budget when the object closes (see [`Parser::close_frame`]).
/// Objects deeper than the table share its last slot.
struct SizeGuesses([u8; SIZE_GUESS_DEPTHS]);

const SIZE_GUESS_DEPTHS: usize = 16;
/// The guess before any object at a depth has closed: the four members of a JSON-RPC request
/// (`jsonrpc`, `id`, `method`, `params`), the root of most messages.
const FIRST_SIZE_GUESS: u8 = 4;
/// No guess is larger: room past it is left to growth, so one large object does not make its
/// siblings large.
const MAX_SIZE_GUESS: usize = 16;

impl SizeGuesses {
    /// The entries the last object closed at `depth` had.
    #[inline]
    fn at(&self, depth: usize) -> usize {
        usize::from(self.0[depth.min(SIZE_GUESS_DEPTHS - 1)])
    }

    #[inline]
    fn learn(&mut self, depth: usize, entries: usize) {
        // At most MAX_SIZE_GUESS, which fits a byte.
        self.0[depth.min(SIZE_GUESS_DEPTHS - 1)] = entries.min(MAX_SIZE_GUESS) as u8;
    }
}

/// The room to make a map with for `guess` entries: as many as its hash table holds anyway.
///
/// A map made for `n` entries gets a table of 4, 8 or 16 buckets, which holds 3, 7 or 14
/// entries before it grows, beside a vector of exactly `n`. Making the vector as large as the
/// table costs a few slots of heap where a guess one short would cost a reallocation of the
/// vector (the table would not have grown). Larger guesses are taken as they are.
#[inline]
fn room_for(guess: usize) -> usize {
    match guess {
        0 => 0,
        1..=3 => 3,
        4..=7 => 7,
        8..=14 => 14,
        larger => larger,
    }
}

/// The room an object whose siblings had two or three entries gets while the budget has
/// heap to spare (see [`Parser::open_object`]): what a table of eight buckets holds.
const SPARE_ROOM: usize = 7;

/// A decode in progress; `'w` is the borrow of this thread's [`Scratch`].
struct Parser<'t, 'w> {
    text: &'t str,
    lines: Lines<'t>,
    strict: bool,
    max_depth: usize,
    frames: &'w mut Vec<Frame>,
    result: Option<Value>,
    /// How large to make the next object's map at each depth.
    size_guesses: SizeGuesses,
    /// Reused buffer for the cells of one row.
    cells: &'w mut Vec<Value>,
    /// What the value built so far may still take (see [`crate::budget`]).
    budget: Budget,
    /// The whole budget, for the error message.
    max_decoded_bytes: usize,
}

/// The parser's working vectors, kept per thread from one decode to the next.
///
/// A fresh parser would allocate them for every message: for a small request that is most
/// of its allocations, and a frame stack or cell buffer of a kilobyte or more is a request
/// the allocator serves from its large bins, which first consolidates every small block
/// freed since (the previous message's value) — more work than decoding the message.
/// Between decodes the vectors are empty; their capacities are capped by [`Scratch::keep`].
#[derive(Default)]
struct Scratch {
    frames: Vec<Frame>,
    cells: Vec<Value>,
}

/// Capacities a thread keeps between decodes; a vector that grew past its cap for one
/// unusual message is freed rather than held.
const KEPT_FRAMES: usize = 64;
const KEPT_CELLS: usize = 256;

impl Scratch {
    /// Empties the vectors and frees those that grew past their caps.
    fn keep(&mut self) {
        fn reset<T>(vector: &mut Vec<T>, cap: usize) {
            vector.clear();
            if vector.capacity() > cap {
                *vector = Vec::new();
            }
        }
        reset(&mut self.frames, KEPT_FRAMES);
        reset(&mut self.cells, KEPT_CELLS);
    }
}

thread_local! {
    /// Borrowed, in place, while a decode runs: moving the vectors out and back
    /// for every message was a tenth of what decoding a one-line message costs.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

pub(crate) fn decode(text: &str, options: &DecodeOptions) -> Result<Value, DecodeError> {
    if options.indent == 0 {
        return Err(DecodeError::new(1, 1, "indent must be at least 1"));
    }
    // During thread teardown the thread-local may be gone, and a decode on the same thread
    // during this one (none today) would find it borrowed: both decode with fresh vectors.
    SCRATCH
        .try_with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => decode_with(text, options, &mut scratch),
            Err(_) => decode_with(text, options, &mut Scratch::default()),
        })
        .unwrap_or_else(|_| decode_with(text, options, &mut Scratch::default()))
}

fn decode_with(
    text: &str,
    options: &DecodeOptions,
    scratch: &mut Scratch,
) -> Result<Value, DecodeError> {
    let max_decoded_bytes = options
        .max_decoded_bytes
        .unwrap_or_else(|| decode_budget(text.len()));
    let Scratch { frames, cells } = scratch;
    let decoded = Parser {
        text,
        lines: Lines::new(text, options.indent, options.strict),
        strict: options.strict,
        max_depth: options.max_depth,
        frames,
        result: None,
        size_guesses: SizeGuesses([FIRST_SIZE_GUESS; SIZE_GUESS_DEPTHS]),
        cells,
        budget: Budget::new(max_decoded_bytes),
        max_decoded_bytes,
    }
    .document();
    // A failed decode leaves its open frames behind; the next one starts empty.
    scratch.keep();
    decoded
}

impl<'t> Parser<'t, '_> {
    // ----- errors -----

    fn error_at(&self, line: &Line, offset: usize, message: impl Into<String>) -> DecodeError {
        let offset = offset.clamp(line.start, self.text.len());
        let column = self
            .text
            .get(line.start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        DecodeError::new(line.number, column, message)
    }

    fn error_line(&self, line: &Line, message: impl Into<String>) -> DecodeError {
        self.error_at(line, line.content, message)
    }

    fn over_indented(&self, line: &Line, expected: usize) -> DecodeError {
        self.error_line(
            line,
            format!(
                "over-indented line: expected depth {expected}, found {}",
                line.depth
            ),
        )
    }

    /// Takes `bytes` from the budget, or fails at `line` once it is spent.
    #[inline]
    fn charge(&self, line: &Line, bytes: usize) -> Result<(), DecodeError> {
        if self.budget.take(bytes) {
            return Ok(());
        }
        Err(self.error_line(line, over_budget(self.max_decoded_bytes, self.text.len())))
    }

    /// The budget error for a charge made after a line, not for it (an object's unused room).
    #[cold]
    fn over_budget_at_last_line(&self) -> DecodeError {
        let message = over_budget(self.max_decoded_bytes, self.text.len());
        DecodeError::new(self.lines.last_consumed.max(1), 1, message)
    }

    fn content(&self, line: &Line) -> &'t str {
        &self.text[line.content..line.end]
    }

    /// Containers opened at the current position would sit at this nesting level.
    fn check_nesting(&self, line: &Line, extra: usize) -> Result<(), DecodeError> {
        if self.frames.len() + extra > self.max_depth {
            return Err(self.error_line(
                line,
                format!("nesting deeper than the limit of {}", self.max_depth),
            ));
        }
        Ok(())
    }

    fn header_at(&self, line: &Line, offset: usize) -> Result<Option<Header>, DecodeError> {
        let content = &self.text[offset..line.end];
        let group_limit = self.max_depth.saturating_sub(self.frames.len());
        let mut header = parse_header(content, group_limit, self.strict)
            .map_err(|(at, message)| self.error_at(line, offset + at, message))?;
        // Make the inline range absolute, like every other offset here.
        if let Some(header) = header.as_mut() {
            header.inline = header
                .inline
                .map(|(start, end)| (offset + start, offset + end));
        }
        Ok(header)
    }

    // ----- document -----

    fn document(&mut self) -> Result<Value, DecodeError> {
        let Some(first) = self.lines.peek()? else {
            return Ok(Value::Object(Map::new()));
        };
        if first.depth != 0 {
            return Err(self.over_indented(&first, 0));
        }
        let content = self.content(&first);
        if content == "[]" {
            self.lines.advance();
            self.check_nesting(&first, 1)?;
            return self.finish_root(Value::Array(Vec::new()));
        }
        if content.starts_with('[') {
            if let Some(header) = self.header_at(&first, first.content)? {
                self.lines.advance();
                // The array lands in `result` at once, or when its list frame closes.
                self.array_from_header(&header, &first, 0, Slot::Root)?;
                self.run()?;
                let value = self.result.take().unwrap_or(Value::Null);
                return self.finish_root(value);
            }
        }
        self.lines.advance();
        let following = self.lines.peek()?;
        // A colon before any bracket or quote settles it without the quote-aware scan.
        let bytes = content.as_bytes();
        let first_mark = first_colon_bracket_or_quote(bytes);
        let has_colon = match first_mark {
            Some(at) if bytes[at] == b':' => true,
            None => false,
            Some(_) => find_unquoted(bytes, b':', 0).is_some(),
        };
        if !has_colon {
            match following {
                None => return self.primitive(&first, first.content, first.end),
                Some(next) if next.depth == 0 => {
                    return Err(self.error_line(
                        &first,
                        "a document with several lines must start with a key-value or array header line",
                    ))
                }
                Some(_) => {}
            }
        }
        self.open_object(Slot::Root, 0, Some(0), &first)?;
        match first_mark {
            // A bare key: the line's shape is known, the search need not run again.
            Some(colon) if bytes[colon] == b':' => {
                self.plain_field(&first, first.content, 0, Some(colon))?;
            }
            _ => self.field_line(&first, first.content, 0)?,
        }
        self.run()?;
        Ok(self.result.take().unwrap_or(Value::Null))
    }

    /// Nothing may follow a root array or primitive: input is never silently dropped.
    fn finish_root(&mut self, value: Value) -> Result<Value, DecodeError> {
        if let Some(extra) = self.lines.peek()? {
            return Err(self.error_line(&extra, "unexpected content after the document root"));
        }
        Ok(value)
    }

    // ----- the frame loop -----

    fn run(&mut self) -> Result<(), DecodeError> {
        while let Some(frame) = self.frames.last_mut() {
            // Each turn takes one line into the innermost frame, or closes it; the close is
            // written once, inlined here, where every frame ends.
            let taken = match frame {
                Frame::Object {
                    min_depth,
                    field_depth,
                    ..
                } => {
                    let min_depth = *min_depth;
                    match self.lines.next_if(|line| line.depth >= min_depth)? {
                        Some(line) => {
                            let depth = *field_depth.get_or_insert(line.depth);
                            if line.depth != depth {
                                return Err(self.over_indented(&line, depth));
                            }
                            self.field_line(&line, line.content, depth)?;
                            true
                        }
                        None => false,
                    }
                }
                Frame::List {
                    items,
                    base_depth,
                    item_depth,
                    declared,
                    ..
                } => {
                    let (base_depth, item_depth) = (*base_depth, *item_depth);
                    let full = self.strict && items.len() >= *declared;
                    // Taken: an item, or a line deeper than the list that is not at the items'
                    // depth (an error). Anything else ends the list and is left for its parent.
                    let text = self.text;
                    let next = if full {
                        None
                    } else {
                        self.lines.next_if(|line| {
                            let content = &text.as_bytes()[line.content..line.end];
                            line.depth > base_depth
                                && (line.depth != item_depth
                                    || content == b"-"
                                    || content.starts_with(b"- "))
                        })?
                    };
                    match next {
                        Some(line) => {
                            if line.depth != item_depth {
                                return Err(self.over_indented(&line, item_depth));
                            }
                            if let Some(Frame::List {
                                first_item_line, ..
                            }) = self.frames.last_mut()
                            {
                                first_item_line.get_or_insert(line.number);
                            }
                            self.list_item(&line, item_depth)?;
                            true
                        }
                        None => false,
                    }
                }
            };
            if !taken {
                self.close_frame()?;
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn close_frame(&mut self) -> Result<(), DecodeError> {
        let Some(frame) = self.frames.pop() else {
            return Ok(());
        };
        match frame {
            Frame::Object {
                map, room, slot, ..
            } => {
                let unused = room.saturating_sub(map.len());
                self.size_guesses.learn(self.frames.len(), map.len());
                self.deliver(Value::Object(map), slot)?;
                // Room made and not used is heap the value keeps: charged like entries, so
                // the budget still bounds what a message builds (after the object has gone
                // to its place, so that a failure has nothing of its own to drop).
                if unused > 0 && !self.budget.take(unused * ENTRY_BYTES) {
                    return Err(self.over_budget_at_last_line());
                }
                Ok(())
            }
            Frame::List {
                items,
                slot,
                item_depth,
                declared,
                header,
                first_item_line,
                ..
            } => {
                let last_line = self.lines.last_consumed;
                self.check_no_blank_lines(first_item_line, last_line, "a list array")?;
                if self.strict {
                    if items.len() != declared {
                        return Err(self.count_error(&header, declared, items.len(), "list items"));
                    }
                    if let Some(next) = self.lines.peek()? {
                        if next.depth == item_depth && self.content(&next).starts_with("- ") {
                            return Err(self.error_line(
                                &next,
                                format!("more list items than the declared {declared}"),
                            ));
                        }
                    }
                }
                self.deliver(Value::Array(items), slot)
            }
        }
    }

    fn deliver(&mut self, value: Value, slot: Slot) -> Result<(), DecodeError> {
        match slot {
            Slot::Root => {
                self.result = Some(value);
                Ok(())
            }
            Slot::Key(key, offset) => self.insert_for_slot(key, value, offset),
            Slot::Push => {
                let Some(Frame::List { items, header, .. }) = self.frames.last() else {
                    return Ok(());
                };
                // The items' vector is charged for what it reserves: its first capacity
                // when the list opened, then each doubling before it happens.
                if items.len() == items.capacity() {
                    let (more, header) = (items.capacity().max(4), *header);
                    self.charge(&header, more * NODE_BYTES)?;
                    if let Some(Frame::List { items, .. }) = self.frames.last_mut() {
                        items.reserve_exact(more);
                    }
                }
                if let Some(Frame::List { items, .. }) = self.frames.last_mut() {
                    items.push(value);
                }
                Ok(())
            }
        }
    }

    /// Whether the budget can pay for room an object may leave unused: while what is left
    /// exceeds the share the rest of the text brings ([`DECODE_BYTES_PER_INPUT_BYTE`] a
    /// byte) by more than a quarter of the whole budget, which stays for the message's own
    /// needs.
    #[inline]
    fn budget_to_spare(&self) -> bool {
        let share = self
            .lines
            .remaining_bytes()
            .saturating_mul(DECODE_BYTES_PER_INPUT_BYTE);
        self.budget.left().saturating_sub(share) > self.max_decoded_bytes / 4
    }

    /// Opens an object: a frame on the stack, its map sized by the guess for its depth. The
    /// frame is made in place, where a frame returned to the caller was moved twice.
    #[inline(always)]
    fn open_object(
        &mut self,
        slot: Slot,
        min_depth: usize,
        field_depth: Option<usize>,
        line: &Line,
    ) -> Result<(), DecodeError> {
        self.check_nesting(line, 1)?;
        let guess = self.size_guesses.at(self.frames.len());
        // Siblings of two or three entries are often followed by one of four or more (a node
        // with optional fields): room for seven, while the budget has heap to spare, saves
        // those the growth of their map (a new table, every entry moved), which costs more
        // than the larger block. Without spare heap the room stays the table's: unused room
        // is charged, and must not crowd out the rest of the message.
        let room = if (2..=3).contains(&guess) && self.budget_to_spare() {
            SPARE_ROOM
        } else {
            room_for(guess)
        };
        self.frames.push(Frame::Object {
            map: Map::with_capacity(room),
            room,
            slot,
            min_depth,
            field_depth,
        });
        Ok(())
    }

    /// Inserts into the innermost open object, rejecting a key seen before
    /// (strict mode) or replacing its value in place (non-strict: the last one wins).
    ///
    /// One insert that replaces, rather than a look-up and then an insert: the key is hashed
    /// and its slot found once. A duplicate in strict mode fails the whole decode, so the
    /// value it replaced is never seen; the key, which the insert dropped, is read again
    /// from the line for the message.
    ///
    /// Inlined, like [`Parser::field_line`] and [`Parser::trimmed_primitive`]: they run once
    /// per line, and as calls their register saves and restores were a tenth of a line's cost.
    #[inline(always)]
    fn insert(
        &mut self,
        key: String,
        value: Value,
        line: &Line,
        offset: usize,
    ) -> Result<(), DecodeError> {
        self.try_insert(key, value)
            .map_err(|refusal| self.insert_error(refusal, line, offset))
    }

    /// [`Parser::insert`] for a container's slot, which has the key's offset but not its line.
    #[inline(always)]
    fn insert_for_slot(
        &mut self,
        key: String,
        value: Value,
        offset: usize,
    ) -> Result<(), DecodeError> {
        self.try_insert(key, value)
            .map_err(|refusal| self.insert_error(refusal, &self.line_around(offset), offset))
    }

    #[inline(always)]
    fn try_insert(&mut self, key: String, value: Value) -> Result<(), InsertRefusal> {
        if !self.budget.take(ENTRY_BYTES + key.len()) {
            return Err(InsertRefusal::OverBudget);
        }
        let Some(Frame::Object { map, .. }) = self.frames.last_mut() else {
            return Ok(());
        };
        // `Map::insert` keeps a replaced entry where it was, as the last-one-wins rule wants.
        if map.insert(key, value).is_none() || !self.strict {
            return Ok(());
        }
        Err(InsertRefusal::Duplicate)
    }

    /// The error for a key at `offset` of `line` that was refused.
    #[cold]
    #[inline(never)]
    fn insert_error(&self, refusal: InsertRefusal, line: &Line, offset: usize) -> DecodeError {
        match refusal {
            InsertRefusal::OverBudget => {
                self.error_line(line, over_budget(self.max_decoded_bytes, self.text.len()))
            }
            InsertRefusal::Duplicate => {
                let key = self.key_at(line, offset);
                self.error_at(line, offset, format!("duplicate key \"{key}\""))
            }
        }
    }

    /// The line that holds byte `offset`, as the line scanner read it (its depth aside), for
    /// an error about a key whose container closed lines after it.
    #[cold]
    #[inline(never)]
    fn line_around(&self, offset: usize) -> Line {
        let bytes = self.text.as_bytes();
        let mut start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |newline| newline + 1);
        // The scanner's first line starts after a byte-order mark.
        if start == 0 && self.text.starts_with('\u{feff}') {
            start = 3;
        }
        let number = memchr::memchr_iter(b'\n', &bytes[..start]).count() + 1;
        let mut end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |n| offset + n);
        if end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        while end > start && bytes[end - 1] == b' ' {
            end -= 1;
        }
        // Indentation as the scanner takes it: spaces, and tabs too outside strict mode.
        let indentation = bytes[start..end]
            .iter()
            .take_while(|&&byte| byte == b' ' || (!self.strict && byte == b'\t'))
            .count();
        Line {
            number,
            start,
            content: start + indentation,
            end,
            depth: 0,
        }
    }

    /// The key of the field at `offset` of `line`, as [`Parser::field_line`] (and a list
    /// item's first field) read it: a header's key when the line is a header (the full
    /// parser says so for every line the shortcuts there read as one, and for no other),
    /// else a quoted or bare key before the colon.
    fn key_at(&self, line: &Line, offset: usize) -> String {
        if let Ok(Some(Header { key: Some(key), .. })) = self.header_at(line, offset) {
            return key;
        }
        let bytes = &self.text.as_bytes()[offset..line.end];
        if bytes.first() == Some(&b'"') {
            return self
                .quoted_key(line, offset)
                .map_or_else(|_| String::new(), |(key, _)| key);
        }
        let colon = find_unquoted(bytes, b':', 0).unwrap_or(bytes.len());
        self.text[offset..offset + colon]
            .trim_end_matches(' ')
            .to_owned()
    }

    #[inline(always)]
    fn push_frame(&mut self, frame: Frame, line: &Line) -> Result<(), DecodeError> {
        self.check_nesting(line, 1)?;
        self.frames.push(frame);
        Ok(())
    }

    fn count_error(&self, line: &Line, declared: usize, found: usize, what: &str) -> DecodeError {
        self.error_line(line, format!("expected {declared} {what}, found {found}"))
    }

    /// Strict mode forbids blank lines between the first and last line of an array.
    fn check_no_blank_lines(
        &self,
        first: Option<usize>,
        last: usize,
        what: &str,
    ) -> Result<(), DecodeError> {
        let Some(first) = first else {
            return Ok(());
        };
        if !self.strict {
            return Ok(());
        }
        let blanks = &self.lines.blank_lines;
        let index = blanks.partition_point(|&n| n <= first);
        match blanks.get(index) {
            Some(&blank) if blank < last => Err(DecodeError::new(
                blank,
                1,
                format!("blank lines are not allowed inside {what} in strict mode"),
            )),
            _ => Ok(()),
        }
    }

    /// The depth of a header's content: one below it, or (non-strict only)
    /// wherever a deeper first line sits.
    fn content_depth(&mut self, base_depth: usize) -> Result<usize, DecodeError> {
        match self.lines.peek()? {
            Some(next) if next.depth > base_depth + 1 => {
                if self.strict {
                    return Err(self.error_line(
                        &next,
                        format!(
                            "indentation jumps more than one level: expected depth {}, found {}",
                            base_depth + 1,
                            next.depth
                        ),
                    ));
                }
                Ok(next.depth)
            }
            _ => Ok(base_depth + 1),
        }
    }

    // ----- lines -----

    /// A `key: value` or `key[N]...:` line inside the innermost object; `from`
    /// is where the key starts (after a list hyphen, for list items).
    #[inline(always)]
    fn field_line(&mut self, line: &Line, from: usize, depth: usize) -> Result<(), DecodeError> {
        let bytes = &self.text.as_bytes()[from..line.end];
        // The common case, `key: value` with a bare key, is settled by the first
        // of `:`, `[` and `"`; everything else takes the general path.
        let simple_colon = match first_colon_bracket_or_quote(bytes) {
            Some(at) if bytes[at] == b':' => Some(at),
            Some(at) if bytes[at] == b'"' && at == 0 => {
                match super::quote::find_closing_quote(bytes, 0) {
                    Some(close) if bytes.get(close + 1) != Some(&b'[') => None,
                    _ => return self.maybe_header_field(line, from, depth),
                }
            }
            Some(at) if bytes[at] == b'[' => {
                // A bracket first: most headers are `key[N]:` or `key[N]: values`, read
                // from the bracket on without looking for it again.
                if let Some(header) = plain_header_at(&self.text[from..line.end], at, from) {
                    return self.header_field(header, line, from, depth);
                }
                return self.maybe_header_field(line, from, depth);
            }
            Some(_) => return self.maybe_header_field(line, from, depth),
            None => None,
        };
        self.plain_field(line, from, depth, simple_colon)
    }

    fn maybe_header_field(
        &mut self,
        line: &Line,
        from: usize,
        depth: usize,
    ) -> Result<(), DecodeError> {
        match self.header_at(line, from)? {
            Some(header) => self.header_field(header, line, from, depth),
            None => self.plain_field(line, from, depth, None),
        }
    }

    fn header_field(
        &mut self,
        mut header: Header,
        line: &Line,
        from: usize,
        depth: usize,
    ) -> Result<(), DecodeError> {
        let Some(key) = header.key.take() else {
            let message = if header.keyed {
                "a keyless keyed header is only valid at the document root"
            } else {
                "a keyless array header is only valid at the document root or as a list item"
            };
            return Err(self.error_at(line, from, message));
        };
        self.array_from_header(&header, line, depth, Slot::Key(key, from))
    }

    /// `key: value`, `key:` (nested object or `{}`) or `key: []`.
    fn plain_field(
        &mut self,
        line: &Line,
        from: usize,
        depth: usize,
        colon: Option<usize>,
    ) -> Result<(), DecodeError> {
        // Offsets stay absolute and the text is sliced once per string it yields: every
        // `str` slice checks both of its ends for a character boundary.
        let bytes = &self.text.as_bytes()[..line.end];
        let (key, after_colon) = if bytes[from] == b'"' {
            self.quoted_key(line, from)?
        } else {
            let colon = match colon {
                Some(colon) => from + colon,
                None => find_unquoted(bytes, b':', from)
                    .ok_or_else(|| self.error_at(line, from, "missing colon after key"))?,
            };
            // `from` is the key's first byte, never a space (every caller passes the first
            // byte after the indentation or the list hyphen's spaces).
            let key = &self.text[from..colon];
            let key = if key.ends_with(' ') {
                key.trim_end_matches(' ')
            } else {
                key
            };
            (key.to_owned(), colon + 1)
        };
        let value_start = skip_spaces(bytes, after_colon);
        let rest = &bytes[value_start..];
        if rest.is_empty() {
            match self.lines.peek()? {
                Some(next) if next.depth > depth => {
                    if self.strict && next.depth > depth + 1 {
                        return Err(self.error_line(
                            &next,
                            format!(
                                "indentation jumps more than one level: expected depth {}, found {}",
                                depth + 1,
                                next.depth
                            ),
                        ));
                    }
                    return self.open_object(Slot::Key(key, from), depth + 1, None, line);
                }
                _ => {
                    self.check_nesting(line, 1)?;
                    return self.insert(key, Value::Object(Map::new()), line, from);
                }
            }
        }
        let value = if rest == b"[]" {
            self.check_nesting(line, 1)?;
            Value::Array(Vec::new())
        } else {
            // The line's end is trimmed already, and its start was just skipped to.
            self.trimmed_primitive(line, value_start, line.end)?
        };
        self.insert(key, value, line, from)
    }

    /// A quoted key at `from` and the offset just past its colon.
    #[inline(never)]
    fn quoted_key(&self, line: &Line, from: usize) -> Result<(String, usize), DecodeError> {
        let content = &self.text[from..line.end];
        let (key, end) =
            decode_quoted(content, 0).map_err(|(at, m)| self.error_at(line, from + at, m))?;
        let colon = skip_spaces(content.as_bytes(), end);
        if content.as_bytes().get(colon) != Some(&b':') {
            return Err(self.error_at(line, from + colon, "missing colon after key"));
        }
        Ok((key, from + colon + 1))
    }

    /// One `- ...` line of a list array (the innermost frame).
    fn list_item(&mut self, line: &Line, item_depth: usize) -> Result<(), DecodeError> {
        let content = self.content(line);
        if content == "-" {
            self.check_nesting(line, 1)?;
            return self.deliver(Value::Object(Map::new()), Slot::Push);
        }
        let from = line.content + skip_spaces(content.as_bytes(), 1);
        let after = &self.text[from..line.end];
        if after == "[]" {
            self.check_nesting(line, 1)?;
            return self.deliver(Value::Array(Vec::new()), Slot::Push);
        }
        let bytes = after.as_bytes();
        // The first of `:`, `[` and `"` settles the common items: a colon first is a bare
        // key (an object item; a header needs its bracket before the colon), none of them
        // a primitive. Brackets and quotes take the general path.
        match first_colon_bracket_or_quote(bytes) {
            Some(colon) if bytes[colon] == b':' => {
                self.open_object(Slot::Push, item_depth + 1, Some(item_depth + 1), line)?;
                return self.plain_field(line, from, item_depth + 1, Some(colon));
            }
            None => {
                let value = self.primitive(line, from, line.end)?;
                return self.deliver(value, Slot::Push);
            }
            Some(_) => {}
        }
        let may_be_header =
            memchr::memchr(b'[', bytes).is_some() && memchr::memchr(b':', bytes).is_some();
        if may_be_header {
            if let Some(header) = self.header_at(line, from)? {
                if header.key.is_none() {
                    // `- [M]: ...` or `- [M]:` — the item is itself an array.
                    if header.keyed || header.fields.is_some() {
                        let message = if header.keyed {
                            "a keyless keyed header is only valid at the document root"
                        } else {
                            "a keyless header with a field list is only valid at the document root"
                        };
                        return Err(self.error_at(line, from, message));
                    }
                    return self.array_from_header(&header, line, item_depth, Slot::Push);
                }
                // The item is an object whose first field is this array; its
                // other fields follow one level below the hyphen.
                self.open_object(Slot::Push, item_depth + 1, Some(item_depth + 1), line)?;
                // Tables on the hyphen line put their rows two levels below it.
                return self.header_field(header, line, from, item_depth + 1);
            }
        }
        if find_unquoted(bytes, b':', 0).is_some() {
            self.open_object(Slot::Push, item_depth + 1, Some(item_depth + 1), line)?;
            return self.plain_field(line, from, item_depth + 1, None);
        }
        let value = self.primitive(line, from, line.end)?;
        self.deliver(value, Slot::Push)
    }

    // ----- arrays -----

    /// Decodes the body of an array header whose line is `line` at `base_depth`
    /// and delivers it to `slot`: at once when the body is complete (inline
    /// values, tables), or when the list frame pushed for it closes.
    fn array_from_header(
        &mut self,
        header: &Header,
        line: &Line,
        base_depth: usize,
        slot: Slot,
    ) -> Result<(), DecodeError> {
        if let Some(fields) = &header.fields {
            // The table, its rows and their groups all count towards the limit.
            self.check_nesting(line, 2 + fields.group_depth)?;
        } else {
            self.check_nesting(line, 1)?;
        }
        let value = if header.keyed {
            self.keyed_table(header, line, base_depth)?
        } else if let Some((start, end)) = header.inline {
            self.inline_array(header, line, start, end)?
        } else if header.fields.is_some() {
            self.table(header, line, base_depth)?
        } else {
            let item_depth = self.content_depth(base_depth)?;
            let capacity = header
                .length
                .min(self.lines.remaining_bytes() / 2 + 1)
                .min(1024);
            self.charge(line, capacity * NODE_BYTES)?;
            return self.push_frame(
                Frame::List {
                    items: Vec::with_capacity(capacity),
                    slot,
                    base_depth,
                    item_depth,
                    declared: header.length,
                    header: *line,
                    first_item_line: None,
                },
                line,
            );
        };
        // Most arrays finished here are a field's (`tags[3]: ...`): inserted in place, not
        // through `deliver`, whose call was a fifth of what such a line costs.
        match slot {
            Slot::Key(key, offset) => self.insert_for_slot(key, value, offset),
            slot => self.deliver(value, slot),
        }
    }

    fn inline_array(
        &mut self,
        header: &Header,
        line: &Line,
        start: usize,
        end: usize,
    ) -> Result<Value, DecodeError> {
        let capacity = header
            .length
            .min(end - start + 1)
            .min(self.budget.nodes_left());
        let mut values = Vec::with_capacity(capacity);
        self.split_cells(line, start, end, header.delimiter, &mut values)?;
        if self.strict && values.len() != header.length {
            return Err(self.count_error(line, header.length, values.len(), "inline values"));
        }
        Ok(Value::Array(values))
    }

    fn table(
        &mut self,
        header: &Header,
        line: &Line,
        base_depth: usize,
    ) -> Result<Value, DecodeError> {
        let Some(fields) = &header.fields else {
            return Ok(Value::Array(Vec::new()));
        };
        let row_depth = self.content_depth(base_depth)?;
        let delimiter = header.delimiter;
        // Every row is an array element and an object of the fields, whose keys are copied
        // into each row: charged before the row is built, so a long key cannot multiply.
        let row_cost = NODE_BYTES + fields_cost(fields);
        let capacity = header
            .length
            .min(self.lines.remaining_bytes() / 2 + 1)
            .min(self.budget.nodes_left());
        let mut rows = Vec::with_capacity(capacity);
        let mut first_row = None;
        let mut last_row = line.number;
        let text = self.text;
        while !self.strict || rows.len() < header.length {
            // Taken: a row, or a line deeper than the header that is not at the rows' depth
            // (an error). Anything else ends the table and is left for what follows.
            let Some(next) = self.lines.next_if(|next| {
                next.depth > base_depth
                    && (next.depth != row_depth || is_row(text, next, delimiter))
            })?
            else {
                break;
            };
            if next.depth != row_depth {
                return Err(self.over_indented(&next, row_depth));
            }
            first_row.get_or_insert(next.number);
            last_row = next.number;
            self.charge(&next, row_cost)?;
            let row = self.row_object(&next, next.content, fields, delimiter)?;
            rows.push(row);
        }
        self.check_no_blank_lines(first_row, last_row, "a tabular array")?;
        if self.strict {
            if rows.len() != header.length {
                return Err(self.count_error(line, header.length, rows.len(), "tabular rows"));
            }
            if let Some(next) = self.lines.peek()? {
                if next.depth == row_depth
                    && !self.content(&next).starts_with("- ")
                    && is_row(self.text, &next, delimiter)
                {
                    return Err(self.error_line(
                        &next,
                        format!("more tabular rows than the declared {}", header.length),
                    ));
                }
            }
        }
        Ok(Value::Array(rows))
    }

    fn keyed_table(
        &mut self,
        header: &Header,
        line: &Line,
        base_depth: usize,
    ) -> Result<Value, DecodeError> {
        let Some(fields) = &header.fields else {
            return Ok(Value::Object(Map::new()));
        };
        let entry_depth = self.content_depth(base_depth)?;
        let mut map = Map::new();
        let mut first_entry = None;
        let mut last_entry = line.number;
        while let Some(next) = self.lines.peek()? {
            if next.depth <= base_depth {
                break;
            }
            if next.depth != entry_depth {
                return Err(self.over_indented(&next, entry_depth));
            }
            let content = self.content(&next);
            let bytes = content.as_bytes();
            let (key, after_colon) = if bytes.first() == Some(&b'"') {
                let (key, end) = decode_quoted(content, 0)
                    .map_err(|(at, m)| self.error_at(&next, next.content + at, m))?;
                let colon = skip_spaces(bytes, end);
                if bytes.get(colon) != Some(&b':') {
                    return Err(self.error_at(
                        &next,
                        next.content + colon,
                        "missing colon after entry key",
                    ));
                }
                (key, colon + 1)
            } else {
                let colon = find_unquoted(bytes, b':', 0).ok_or_else(|| {
                    self.error_line(
                        &next,
                        "expected an entry row (`key: cells`) inside a keyed table",
                    )
                })?;
                (trim_spaces(&content[..colon]).to_owned(), colon + 1)
            };
            self.lines.advance();
            first_entry.get_or_insert(next.number);
            last_entry = next.number;
            self.charge(&next, ENTRY_BYTES + key.len() + fields_cost(fields))?;
            let cells_from = next.content + after_colon;
            let value = self.row_object(&next, cells_from, fields, header.delimiter)?;
            match map.entry(key) {
                serde_json::map::Entry::Vacant(entry) => {
                    entry.insert(value);
                }
                serde_json::map::Entry::Occupied(mut entry) if !self.strict => {
                    entry.insert(value);
                }
                serde_json::map::Entry::Occupied(entry) => {
                    let message = format!("duplicate entry key \"{}\"", entry.key());
                    return Err(self.error_line(&next, message));
                }
            }
        }
        if self.strict && map.len() != header.length {
            return Err(self.count_error(line, header.length, map.len(), "keyed entries"));
        }
        self.check_no_blank_lines(first_entry, last_entry, "a keyed table")?;
        Ok(Value::Object(map))
    }

    /// Splits the cells from `from` to the end of `line` and builds the row
    /// object the field list describes.
    fn row_object(
        &mut self,
        line: &Line,
        from: usize,
        fields: &Fields,
        delimiter: Delimiter,
    ) -> Result<Value, DecodeError> {
        let mut cells = std::mem::take(self.cells);
        cells.clear();
        let trimmed_from = skip_spaces(&self.text.as_bytes()[..line.end], from);
        if trimmed_from < line.end {
            if let Err(error) =
                self.split_cells(line, trimmed_from, line.end, delimiter, &mut cells)
            {
                *self.cells = cells;
                return Err(error);
            }
        }
        if cells.len() != fields.leaf_count {
            let error = self.count_error(line, fields.leaf_count, cells.len(), "cells in the row");
            *self.cells = cells;
            return Err(error);
        }
        // The cells were charged as array elements while split; they now sit in the row's
        // entries, which are charged already.
        self.budget.give_back(cells.len() * NODE_BYTES);
        let row = build_row(fields, &mut cells);
        *self.cells = cells;
        Ok(row)
    }

    /// Splits `start..end` on unquoted `delimiter`s and decodes each cell.
    fn split_cells(
        &self,
        line: &Line,
        start: usize,
        end: usize,
        delimiter: Delimiter,
        out: &mut Vec<Value>,
    ) -> Result<(), DecodeError> {
        let bytes = &self.text.as_bytes()[..end];
        let delim = delimiter.as_byte();
        let mut cell_start = start;
        loop {
            // A cell is read once: a quoted one by `decode_quoted`, and taken if the delimiter
            // or the end follows its closing quote; a bare one up to the delimiter, which it
            // must reach before any quote. Everything else (a quote inside a bare cell, text
            // after a closing quote, a broken string) takes the quote-aware search and the full
            // primitive, which words the error.
            let token_start = skip_spaces(bytes, cell_start);
            let cell_end = match bytes.get(token_start) {
                Some(b'"') => {
                    if let Ok((text, after_quote)) = decode_quoted(&self.text[..end], token_start) {
                        let after = skip_spaces(bytes, after_quote);
                        if after == end || bytes[after] == delim {
                            self.charge(line, NODE_BYTES + text.len())?;
                            out.push(Value::String(text));
                            if after == end {
                                return Ok(());
                            }
                            cell_start = after + 1;
                            continue;
                        }
                    }
                    None
                }
                _ => match find_either(delim, b'"', &bytes[token_start..]) {
                    Some(offset) if bytes[token_start + offset] == b'"' => None,
                    Some(offset) => Some(token_start + offset),
                    None => Some(end),
                },
            };
            let cell_end =
                cell_end.unwrap_or_else(|| find_unquoted(bytes, delim, cell_start).unwrap_or(end));
            self.charge(line, NODE_BYTES)?;
            // `token_start` is past the cell's leading spaces; its trailing ones go here, and
            // the token is read in place rather than through a call to `primitive`.
            let mut token_end = cell_end;
            while token_end > token_start && bytes[token_end - 1] == b' ' {
                token_end -= 1;
            }
            out.push(self.trimmed_primitive(line, token_start, token_end)?);
            if cell_end >= end {
                return Ok(());
            }
            cell_start = cell_end + 1;
        }
    }

    // ----- primitives -----

    /// Decodes the token in `start..end` (spaces around it ignored).
    fn primitive(&self, line: &Line, start: usize, end: usize) -> Result<Value, DecodeError> {
        let bytes = &self.text.as_bytes()[..end];
        let start = skip_spaces(bytes, start);
        let mut end = end;
        while end > start && bytes[end - 1] == b' ' {
            end -= 1;
        }
        self.trimmed_primitive(line, start, end)
    }

    /// Decodes the token in `start..end`, which neither starts nor ends with a space.
    #[inline(always)]
    fn trimmed_primitive(
        &self,
        line: &Line,
        start: usize,
        end: usize,
    ) -> Result<Value, DecodeError> {
        let token = &self.text[start..end];
        let Some(&first) = token.as_bytes().first() else {
            return Ok(Value::String(String::new()));
        };
        match first {
            b'"' => {
                let (text, after) = decode_quoted(token, 0)
                    .map_err(|(at, m)| self.error_at(line, start + at, m))?;
                if after != token.len() {
                    return Err(self.error_at(
                        line,
                        start + after,
                        "unexpected characters after closing quote",
                    ));
                }
                self.charge(line, text.len())?;
                Ok(Value::String(text))
            }
            b't' if token == "true" => Ok(Value::Bool(true)),
            b'f' if token == "false" => Ok(Value::Bool(false)),
            b'n' if token == "null" => Ok(Value::Null),
            b'-' | b'0'..=b'9' => match decode_number(token) {
                Some(number) => Ok(number),
                None => {
                    self.charge(line, token.len())?;
                    Ok(Value::String(token.to_owned()))
                }
            },
            _ => {
                self.charge(line, token.len())?;
                Ok(Value::String(token.to_owned()))
            }
        }
    }
}

/// The first `:`, `[` or `"` in `bytes`, which tells a line's shape (keys are short: see
/// [`super::byte_search`]).
#[inline]
fn first_colon_bracket_or_quote(bytes: &[u8]) -> Option<usize> {
    find_any_of_three([b':', b'[', b'"'], bytes)
}

/// Row or key-value line? A row of `text` has no unquoted colon before its first unquoted
/// delimiter (or has neither).
#[inline]
fn is_row(text: &str, line: &Line, delimiter: Delimiter) -> bool {
    let bytes = &text.as_bytes()[line.content..line.end];
    match find_unquoted2(bytes, delimiter.as_byte(), b':', 0) {
        Some(at) => bytes[at] != b':',
        None => true,
    }
}

/// What the objects of one row take besides their cells: an entry and a key copy for every
/// field and every group.
fn fields_cost(fields: &Fields) -> usize {
    fields
        .ops
        .iter()
        .map(|op| match op {
            FieldOp::Leaf(name) => ENTRY_BYTES + name.len(),
            FieldOp::Open(name) => ENTRY_BYTES + name.len(),
            FieldOp::Close => 0,
        })
        .fold(0, usize::saturating_add)
}

/// Materialises one row: leaves take cells in order, groups become nested objects.
fn build_row(fields: &Fields, cells: &mut Vec<Value>) -> Value {
    let mut cells = cells.drain(..);
    if fields.is_flat() {
        let mut map = Map::with_capacity(fields.leaf_count);
        for op in &fields.ops {
            if let (FieldOp::Leaf(name), Some(cell)) = (op, cells.next()) {
                map.insert(name.clone(), cell);
            }
        }
        return Value::Object(map);
    }
    let mut open: Vec<(&str, Map<String, Value>)> = Vec::new();
    let mut current = Map::new();
    for op in &fields.ops {
        match op {
            FieldOp::Leaf(name) => {
                if let Some(cell) = cells.next() {
                    current.insert(name.clone(), cell);
                }
            }
            FieldOp::Open(name) => open.push((name, std::mem::take(&mut current))),
            FieldOp::Close => {
                if let Some((name, mut parent)) = open.pop() {
                    parent.insert(
                        name.to_owned(),
                        Value::Object(std::mem::replace(&mut current, Map::new())),
                    );
                    current = parent;
                }
            }
        }
    }
    Value::Object(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_default(text: &str) -> Result<Value, DecodeError> {
        decode(text, &DecodeOptions::default())
    }

    /// A text and what it decodes to: its value, or the (line, column) it fails at.
    type Case<'t> = (&'t str, Result<Value, (usize, usize)>);

    /// Each text decodes as its case says.
    fn assert_decodes(cases: &[Case<'_>]) {
        for (text, expected) in cases {
            let decoded = decode_default(text).map_err(|e| (e.line(), e.column()));
            assert_eq!(&decoded, expected, "{text:?}");
        }
    }

    #[test]
    fn a_map_is_made_with_the_room_its_hash_table_holds() {
        // The table under `Map` holds each entry's index, a `usize`; the standard library's
        // set is the same kind of table, so what a set of `usize` holds when made for `guess`
        // is what an object's map holds before it grows.
        for guess in 0..=14 {
            let table = std::collections::HashSet::<usize>::with_capacity(guess).capacity();
            assert_eq!(room_for(guess), table, "a guess of {guess}");
        }
        for guess in 15..=MAX_SIZE_GUESS {
            assert_eq!(room_for(guess), guess);
        }
    }

    #[test]
    fn a_duplicate_key_is_named_as_it_was_read_in_every_form_of_key() {
        // (text, the duplicate's line and column, the key the message names)
        let cases = [
            ("a: 1\na: 2", (2, 1), "a"),
            ("a: 1\na  : 2", (2, 1), "a"),
            ("\"x y\": 1\n\"x y\": 2", (2, 1), "x y"),
            ("\"q\\\"t\": 1\n\"q\\\"t\" : 2", (2, 1), "q\"t"),
            ("k[2]: a,b\nk: 1", (2, 1), "k"),
            ("k: 1\nk[2]: a,b", (2, 1), "k"),
            ("k: 1\nk[1]:\n  - x", (2, 1), "k"),
            ("\"h k\": 1\n\"h k\"[1]: x", (2, 1), "h k"),
            ("\"h k\"[1]: x\n\"h k\": 2", (2, 1), "h k"),
            ("k: 1\nk[1]{f}:\n  2", (2, 1), "k"),
            ("l[1]:\n  - a: 1\n    a: 2", (3, 5), "a"),
            ("l[1]:\n  - k[1]: x\n    k: 2", (3, 5), "k"),
            ("l[1]:\n  - k: 1\n    k[1]: x", (3, 5), "k"),
            ("o:\n  b: 1\no:\n  c: 2", (3, 1), "o"),
            // A container's key is inserted when the container closes, lines later; its line
            // is found again from the key's offset, through any line ending or mark.
            ("k: 1\r\nk:\r\n  a: 1\r\n", (2, 1), "k"),
            ("\u{feff}k:\n  a: 1\nk:\n  b: 2", (3, 1), "k"),
            ("o:\n  k: 1\n  k[2]:\n    - 1\n    - 2\nn: 1", (3, 3), "k"),
            ("t: 1\nt[2]{a,b}:\n  1,2\n  3,4", (2, 1), "t"),
            ("\"a b\":\n  x: 1\n\"a b\":  \n  y: 2", (3, 1), "a b"),
        ];
        for (text, at, key) in cases {
            let error = decode_default(text).expect_err(text);
            assert_eq!((error.line(), error.column()), at, "{text:?}: {error}");
            assert_eq!(
                error.message(),
                format!("duplicate key \"{key}\""),
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_failed_decode_leaves_nothing_for_the_next_one() {
        // Fails three objects deep, with open maps and an open list still on the stack.
        let broken = "a:\n  b: 1\n  c[1]:\n    - x: 1\n      y:\n        z: 2\n        z: 3";
        let error = decode_default(broken).expect_err("duplicate key");
        assert_eq!((error.line(), error.column()), (7, 9), "{error}");
        let text = "p: 1\nq:\n  r[2]: a,b";
        assert_eq!(
            decode_default(text).expect("valid"),
            serde_json::json!({"p": 1, "q": {"r": ["a", "b"]}})
        );
    }

    #[test]
    fn the_common_shapes_read_in_place_decode_like_the_rest() {
        // Bare keys end at their colon or before spaces; short integers and quoted strings
        // without escapes each take a path of their own, and their neighbours (decimals,
        // long integers, escapes, a missing quote) another; an object of more entries than
        // its map was first made for grows, keeping its order and its duplicate check.
        let many: String = (0..12).map(|n| format!("  k{n}: {n}\n")).collect();
        let cases = [
            ("a : 1\nb  :x", Ok(serde_json::json!({"a": 1, "b": "x"}))),
            (
                "l[1]:\n  - k  : v\n    m: -3",
                Ok(serde_json::json!({"l": [{"k": "v", "m": -3}]})),
            ),
            (
                "i: 7\nn: -0\nd: 1.25\ne: 1e3\nz: 05\nbig: 123456789012345678901",
                Ok(serde_json::json!({
                    "i": 7, "n": 0, "d": 1.25, "e": 1000, "z": "05",
                    "big": "123456789012345678901"
                })),
            ),
            (
                "s: \"plain\"\nt: \"a\\\"b\\n\"\nu: \"\"",
                Ok(serde_json::json!({"s": "plain", "t": "a\"b\n", "u": ""})),
            ),
            ("s: \"open", Err((1, 4))),
            ("s: \"bad\\q\"", Err((1, 8))),
            ("s: \"x\" y", Err((1, 7))),
        ];
        assert_decodes(&cases);
        let large = decode_default(&format!("o:\n{many}")).expect("valid");
        let keys: Vec<&str> = large["o"]
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys.len(), 12);
        assert_eq!(
            (keys[0], keys[11], &large["o"]["k11"]),
            ("k0", "k11", &serde_json::json!(11))
        );
        let error = decode_default(&format!("o:\n{many}  k3: 0")).expect_err("duplicate key");
        assert_eq!((error.line(), error.column()), (14, 3), "{error}");
    }

    #[test]
    fn headers_read_from_their_bracket_decode_like_the_full_header_parser() {
        // Nested one level, so each line takes the field-line path that reads a plain
        // header from the bracket it found; the others must reach the full parser.
        let cases = [
            (
                "o:\n  a[2]: x,y",
                Ok(serde_json::json!({"o": {"a": ["x", "y"]}})),
            ),
            ("o:\n  a[0]:", Ok(serde_json::json!({"o": {"a": []}}))),
            (
                "o:\n  a[2|]: x|y",
                Ok(serde_json::json!({"o": {"a": ["x", "y"]}})),
            ),
            (
                "o:\n  a[1]{b}:\n    7",
                Ok(serde_json::json!({"o": {"a": [{"b": 7}]}})),
            ),
            (
                "o:\n  a[2]:  x , y ",
                Ok(serde_json::json!({"o": {"a": ["x", "y"]}})),
            ),
            ("o:\n  a [2]: x,y", Err((2, 5))),
            ("o:\n  a[02]: x,y", Err((2, 5))),
            ("o:\n  a[2]x: y", Err((2, 7))),
            ("o:\n  a\"b[2]: x", Err((2, 3))),
        ];
        assert_decodes(&cases);
    }

    #[test]
    fn cells_read_in_one_pass_decode_like_the_quote_aware_search() {
        // Quoted cells and bare cells without quotes are read once; a quote inside a bare
        // cell, text after a closing quote and a broken string take the quote-aware search,
        // with the same values and the same error columns.
        let cases = [
            (
                "a[3]: \"x,y\", \"z\" ,w",
                Ok(serde_json::json!({"a": ["x,y", "z", "w"]})),
            ),
            (
                "a[3]:   \"\"  ,  y  ,\"1\"",
                Ok(serde_json::json!({"a": ["", "y", "1"]})),
            ),
            (
                "a[2]: \"q\\\"t,\",b",
                Ok(serde_json::json!({"a": ["q\"t,", "b"]})),
            ),
            (
                "a[2]: ab\"c,d\"e,f",
                Ok(serde_json::json!({"a": ["ab\"c,d\"e", "f"]})),
            ),
            ("a[3]: x,,", Ok(serde_json::json!({"a": ["x", "", ""]}))),
            (
                "a[2|]: \"x|y\"|z",
                Ok(serde_json::json!({"a": ["x|y", "z"]})),
            ),
            (
                "t[2]{k,v}:\n  \"a,b\",1\n  c, \"d\"",
                Ok(serde_json::json!({"t": [{"k": "a,b", "v": 1}, {"k": "c", "v": "d"}]})),
            ),
            ("a[2]: \"a\"x,b", Err((1, 10))),
            ("a[2]: \"a\" x,b", Err((1, 10))),
            ("a[2]: b,\"open", Err((1, 9))),
            ("a[2]: \"bad\\q\",b", Err((1, 11))),
        ];
        assert_decodes(&cases);
    }

    #[test]
    fn the_thread_keeps_only_small_working_vectors() {
        let cells = (0..1000).map(|n| n.to_string()).collect::<Vec<_>>();
        let text = format!(
            "rows[1]{{{}}}:\n  {}",
            (0..1000)
                .map(|n| format!("f{n}"))
                .collect::<Vec<_>>()
                .join(","),
            cells.join(",")
        );
        let value = decode_default(&text).expect("valid");
        assert_eq!(value["rows"][0]["f999"], serde_json::json!(999));
        let kept = SCRATCH.with(|cell| cell.take());
        assert!(kept.cells.is_empty() && kept.cells.capacity() <= KEPT_CELLS);
        assert!(kept.frames.is_empty());
        // A small document leaves its vectors for the next decode on this thread.
        decode_default("a:\n  b:\n    c: 1").expect("valid");
        let kept = SCRATCH.with(|cell| cell.take());
        assert!(kept.frames.capacity() > 0 && kept.frames.is_empty());
    }
}
