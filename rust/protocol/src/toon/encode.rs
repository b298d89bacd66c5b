//! The encoder: one pass over the value, writing straight into one `String`.
//!
//! Nesting is walked with an explicit task stack rather than recursion, so a
//! value of any depth encodes on any thread stack. The only recursion left is
//! the classification of nested field groups in tabular headers, which is capped
//! at [`FIELD_GROUP_DEPTH_LIMIT`]; deeper columns fall back to list form.

use serde_json::{Map, Value};

use super::number::write_number;
use super::options::{Delimiter, EncodeOptions};
use super::quote::{push_key, push_quoted, push_string_value};

/// Deepest nesting of field groups (`a{b{c}}`) the encoder will collapse into a
/// tabular header. Real data rarely nests more than two or three levels; the
/// cap bounds the classifier's recursion.
const FIELD_GROUP_DEPTH_LIMIT: usize = 32;

/// One entry of a flattened tabular field list, in header order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column<'a> {
    /// A field whose cells are primitives.
    Leaf(&'a str),
    /// A field whose values are uniform objects: its subfields follow, up to `Close`.
    Open(&'a str),
    Close,
}

enum Task<'a> {
    /// Remaining fields of an object, written as `key: value` lines.
    Fields {
        entries: serde_json::map::Iter<'a>,
        depth: usize,
    },
    /// Remaining elements of a list-form array, written as `- ` items.
    Items {
        items: std::slice::Iter<'a, Value>,
        depth: usize,
    },
}

enum Step<'a> {
    Field(&'a str, &'a Value, usize),
    Item(&'a Value, usize),
    Done,
}

struct Encoder<'o> {
    out: &'o mut String,
    indent: usize,
    delimiter: Delimiter,
    at_start: bool,
}

/// Appends the TOON encoding of `value` to `out`.
pub(crate) fn encode_into(value: &Value, options: &EncodeOptions, out: &mut String) {
    let mut encoder = Encoder {
        out,
        indent: options.indent.max(1),
        delimiter: options.delimiter,
        at_start: true,
    };
    let mut tasks: Vec<Task<'_>> = Vec::new();
    match value {
        Value::Array(items) => encoder.array(None, items, 0, &mut tasks),
        Value::Object(map) => {
            // An object whose values are uniform objects becomes a keyless keyed table.
            if let Some(columns) = keyed_columns(map) {
                encoder.begin_line(0);
                encoder.header(None, map.len(), true, Some(&columns));
                encoder.keyed_rows(map, &columns, 1);
            } else {
                // The leading fields that hold primitives are written here, so an object of
                // primitives alone (a tool's result, most often) needs no task stack at all;
                // the first field that holds a container leaves the rest to the stack, below
                // that container's own entries.
                let mut entries = map.iter();
                loop {
                    let rest = entries.clone();
                    match entries.next() {
                        None => break,
                        Some((_, Value::Array(_) | Value::Object(_))) => {
                            tasks.push(Task::Fields {
                                entries: rest,
                                depth: 0,
                            });
                            break;
                        }
                        Some((key, primitive)) => encoder.primitive_field(key, primitive, 0),
                    }
                }
            }
        }
        // A leading U+FEFF on line 1 reads as a byte-order mark and would be dropped.
        Value::String(text) if text.starts_with('\u{feff}') => push_quoted(text, encoder.out),
        primitive => encoder.primitive(primitive),
    }
    encoder.run(&mut tasks);
}

impl<'o> Encoder<'o> {
    fn run<'a>(&mut self, tasks: &mut Vec<Task<'a>>) {
        loop {
            let step = match tasks.last_mut() {
                None => return,
                Some(Task::Fields { entries, depth }) => match entries.next() {
                    Some((key, value)) => Step::Field(key, value, *depth),
                    None => Step::Done,
                },
                Some(Task::Items { items, depth }) => match items.next() {
                    Some(value) => Step::Item(value, *depth),
                    None => Step::Done,
                },
            };
            match step {
                Step::Field(key, value, depth) => self.field(key, value, depth, tasks),
                Step::Item(value, depth) => self.list_item(value, depth, tasks),
                Step::Done => {
                    tasks.pop();
                }
            }
        }
    }

    /// Starts a new line at `depth`: lines are joined by `\n`, with no trailing newline.
    fn begin_line(&mut self, depth: usize) {
        if self.at_start {
            self.at_start = false;
        } else {
            self.out.push('\n');
        }
        const SPACES: &str = "                                                                ";
        let mut remaining = depth * self.indent;
        while remaining > 0 {
            let chunk = remaining.min(SPACES.len());
            self.out.push_str(&SPACES[..chunk]);
            remaining -= chunk;
        }
    }

    fn primitive(&mut self, value: &Value) {
        match value {
            Value::Null => self.out.push_str("null"),
            Value::Bool(true) => self.out.push_str("true"),
            Value::Bool(false) => self.out.push_str("false"),
            Value::Number(number) => write_number(number, self.out),
            Value::String(text) => push_string_value(text, self.delimiter, self.out),
            Value::Array(_) | Value::Object(_) => {
                debug_assert!(false, "primitive() called with a container");
            }
        }
    }

    fn push_delimiter(&mut self) {
        self.out.push(char::from(self.delimiter.as_byte()));
    }

    /// `key[N<:?><delim?>]{fields}:` — the delimiter is declared unless it is the comma.
    fn header(
        &mut self,
        key: Option<&str>,
        len: usize,
        keyed: bool,
        columns: Option<&[Column<'_>]>,
    ) {
        if let Some(key) = key {
            push_key(key, self.out);
        }
        self.out.push('[');
        self.out.push_str(itoa::Buffer::new().format(len));
        if keyed {
            self.out.push(':');
        }
        if self.delimiter != Delimiter::Comma {
            self.push_delimiter();
        }
        self.out.push(']');
        if let Some(columns) = columns {
            self.out.push('{');
            let mut group_start = true;
            for column in columns {
                match *column {
                    Column::Leaf(name) | Column::Open(name) => {
                        if !group_start {
                            self.push_delimiter();
                        }
                        push_key(name, self.out);
                        group_start = matches!(column, Column::Open(_));
                        if group_start {
                            self.out.push('{');
                        }
                    }
                    Column::Close => {
                        self.out.push('}');
                        group_start = false;
                    }
                }
            }
            self.out.push('}');
        }
        self.out.push(':');
    }

    /// Writes `cells` after an inline header: ` a,b,c` (nothing when empty).
    fn inline_cells(&mut self, cells: &[Value]) {
        for (index, cell) in cells.iter().enumerate() {
            if index == 0 {
                self.out.push(' ');
            } else {
                self.push_delimiter();
            }
            self.primitive(cell);
        }
    }

    fn field<'a>(
        &mut self,
        key: &'a str,
        value: &'a Value,
        depth: usize,
        tasks: &mut Vec<Task<'a>>,
    ) {
        match value {
            Value::Array(items) => self.array(Some(key), items, depth, tasks),
            Value::Object(map) => {
                if let Some(columns) = keyed_columns(map) {
                    self.begin_line(depth);
                    self.header(Some(key), map.len(), true, Some(&columns));
                    self.keyed_rows(map, &columns, depth + 1);
                    return;
                }
                self.begin_line(depth);
                push_key(key, self.out);
                self.out.push(':');
                if !map.is_empty() {
                    tasks.push(Task::Fields {
                        entries: map.iter(),
                        depth: depth + 1,
                    });
                }
            }
            primitive => self.primitive_field(key, primitive, depth),
        }
    }

    /// A `key: value` line for a primitive value.
    fn primitive_field(&mut self, key: &str, value: &Value, depth: usize) {
        self.begin_line(depth);
        push_key(key, self.out);
        self.out.push_str(": ");
        self.primitive(value);
    }

    fn array<'a>(
        &mut self,
        key: Option<&'a str>,
        items: &'a [Value],
        depth: usize,
        tasks: &mut Vec<Task<'a>>,
    ) {
        self.begin_line(depth);
        if items.is_empty() {
            match key {
                Some(key) => {
                    push_key(key, self.out);
                    self.out.push_str(": []");
                }
                None => self.out.push_str("[]"),
            }
            return;
        }
        match shape_of(items) {
            ArrayShape::Primitives => {
                self.header(key, items.len(), false, None);
                self.inline_cells(items);
            }
            ArrayShape::PrimitiveArrays => {
                self.header(key, items.len(), false, None);
                for item in items {
                    if let Value::Array(inner) = item {
                        self.begin_line(depth + 1);
                        self.out.push_str("- ");
                        self.header(None, inner.len(), false, None);
                        self.inline_cells(inner);
                    }
                }
            }
            ArrayShape::Objects => {
                if !self.table(key, items, depth + 1) {
                    self.header(key, items.len(), false, None);
                    tasks.push(Task::Items {
                        items: items.iter(),
                        depth: depth + 1,
                    });
                }
            }
            ArrayShape::Mixed => {
                self.header(key, items.len(), false, None);
                tasks.push(Task::Items {
                    items: items.iter(),
                    depth: depth + 1,
                });
            }
        }
    }

    fn list_item<'a>(&mut self, value: &'a Value, depth: usize, tasks: &mut Vec<Task<'a>>) {
        match value {
            Value::Array(inner) => {
                self.begin_line(depth);
                self.out.push_str("- ");
                self.header(None, inner.len(), false, None);
                if inner.iter().all(is_primitive) {
                    self.inline_cells(inner);
                } else {
                    // A keyless header with a field list is valid only at the
                    // root, so nested arrays here always use list form.
                    tasks.push(Task::Items {
                        items: inner.iter(),
                        depth: depth + 1,
                    });
                }
            }
            Value::Object(map) => self.object_list_item(map, depth, tasks),
            primitive => {
                self.begin_line(depth);
                self.out.push_str("- ");
                self.primitive(primitive);
            }
        }
    }

    /// An object as a list item: its first field shares the hyphen line, the
    /// rest follow one level deeper.
    fn object_list_item<'a>(
        &mut self,
        map: &'a Map<String, Value>,
        depth: usize,
        tasks: &mut Vec<Task<'a>>,
    ) {
        self.begin_line(depth);
        let mut entries = map.iter();
        let Some((first_key, first_value)) = entries.next() else {
            self.out.push('-');
            return;
        };
        self.out.push_str("- ");
        let rest_depth = depth + 1;
        match first_value {
            Value::Array(items) if items.is_empty() => {
                push_key(first_key, self.out);
                self.out.push_str(": []");
            }
            Value::Array(items) => match shape_of(items) {
                ArrayShape::Primitives => {
                    self.header(Some(first_key), items.len(), false, None);
                    self.inline_cells(items);
                }
                shape => {
                    // Rows sit two levels below the hyphen line.
                    let table = shape == ArrayShape::Objects
                        && self.table(Some(first_key), items, depth + 2);
                    if !table {
                        self.header(Some(first_key), items.len(), false, None);
                        tasks.push(Task::Fields {
                            entries,
                            depth: rest_depth,
                        });
                        tasks.push(Task::Items {
                            items: items.iter(),
                            depth: depth + 2,
                        });
                        return;
                    }
                }
            },
            Value::Object(first_map) => {
                if let Some(columns) = keyed_columns(first_map) {
                    self.header(Some(first_key), first_map.len(), true, Some(&columns));
                    self.keyed_rows(first_map, &columns, depth + 2);
                } else {
                    push_key(first_key, self.out);
                    self.out.push(':');
                    tasks.push(Task::Fields {
                        entries,
                        depth: rest_depth,
                    });
                    if !first_map.is_empty() {
                        tasks.push(Task::Fields {
                            entries: first_map.iter(),
                            depth: depth + 2,
                        });
                    }
                    return;
                }
            }
            primitive => {
                push_key(first_key, self.out);
                self.out.push_str(": ");
                self.primitive(primitive);
            }
        }
        tasks.push(Task::Fields {
            entries,
            depth: rest_depth,
        });
    }

    /// Writes `rows` as a table under `key` (its rows at `rows_depth`) when they are one:
    /// objects of one key set whose columns are each all primitives or all uniform objects.
    /// `false`, with nothing written, when the array takes list form instead.
    fn table(&mut self, key: Option<&str>, rows: &[Value], rows_depth: usize) -> bool {
        let Some(Value::Object(first)) = rows.first() else {
            return false;
        };
        // Most arrays of objects that are not tables show it in their first two rows
        // (objects of different sizes): settled before anything is allocated or written.
        if rows
            .get(1)
            .is_some_and(|second| !matches!(second, Value::Object(map) if map.len() == first.len()))
        {
            return false;
        }
        if first.is_empty() || !first.values().all(is_primitive) {
            // A first row with an object among its cells: a table only with field groups,
            // which are classified before anything is written.
            let Some(columns) = table_columns(rows) else {
                return false;
            };
            self.header(key, rows.len(), false, Some(&columns));
            self.table_rows(rows, &columns, rows_depth);
            return true;
        }
        // Every cell of the first row a primitive: the table can only be flat, and it is
        // written while its rows are checked, in one pass over them. Checking every row
        // first and then writing them read every row twice (the codec bench's 10,000-row
        // table: 23.5 M instructions an encode that way, 19.6 M in one pass). A row that is
        // not one of the table's takes back what was written: the array takes list form.
        let columns: Vec<Column<'_>> = first.keys().map(|name| Column::Leaf(name)).collect();
        let written = self.out.len();
        self.header(key, rows.len(), false, Some(&columns));
        for row in rows {
            let is_a_row = matches!(row, Value::Object(map) if map.len() == first.len() && {
                self.begin_line(rows_depth);
                self.flat_cells(map, &columns)
            });
            if !is_a_row {
                self.out.truncate(written);
                return false;
            }
        }
        true
    }

    fn table_rows(&mut self, rows: &[Value], columns: &[Column<'_>], depth: usize) {
        let flat = columns
            .iter()
            .all(|column| matches!(column, Column::Leaf(_)));
        let mut groups: Vec<&Map<String, Value>> = Vec::new();
        for row in rows {
            if let Value::Object(map) = row {
                self.begin_line(depth);
                if flat {
                    self.flat_cells(map, columns);
                } else {
                    self.nested_cells(map, columns, &mut groups);
                }
            }
        }
    }

    fn keyed_rows(&mut self, map: &Map<String, Value>, columns: &[Column<'_>], depth: usize) {
        let flat = columns
            .iter()
            .all(|column| matches!(column, Column::Leaf(_)));
        let mut groups: Vec<&Map<String, Value>> = Vec::new();
        for (entry_key, entry) in map {
            if let Value::Object(entry_map) = entry {
                self.begin_line(depth);
                push_key(entry_key, self.out);
                self.out.push_str(": ");
                if flat {
                    self.flat_cells(entry_map, columns);
                } else {
                    self.nested_cells(entry_map, columns, &mut groups);
                }
            }
        }
    }

    /// Cells of a row whose fields are all leaves. Rows usually list their keys
    /// in header order, so walk both together and fall back to a lookup only
    /// when a key is out of place. `false` when the row lacks a column or holds a
    /// container in one (never for rows classified as the table's).
    fn flat_cells(&mut self, row: &Map<String, Value>, columns: &[Column<'_>]) -> bool {
        let mut entries = row.iter();
        for (index, column) in columns.iter().enumerate() {
            let Column::Leaf(name) = *column else {
                continue;
            };
            if index > 0 {
                self.push_delimiter();
            }
            let value = match entries.next() {
                Some((key, value)) if same_key(key, name) => Some(value),
                _ => row.get(name),
            };
            match value {
                Some(value) if is_primitive(value) => self.primitive(value),
                _ => return false,
            }
        }
        true
    }

    /// Cells of a row with nested field groups, depth-first in header order.
    fn nested_cells<'a>(
        &mut self,
        row: &'a Map<String, Value>,
        columns: &[Column<'_>],
        groups: &mut Vec<&'a Map<String, Value>>,
    ) {
        groups.clear();
        groups.push(row);
        let mut first = true;
        for column in columns {
            let Some(&current) = groups.last() else {
                return;
            };
            match *column {
                Column::Leaf(name) => {
                    if !first {
                        self.push_delimiter();
                    }
                    first = false;
                    if let Some(value) = current.get(name) {
                        self.primitive(value);
                    }
                }
                Column::Open(name) => match current.get(name) {
                    Some(Value::Object(inner)) => groups.push(inner),
                    // Classification guarantees an object; keep the walk balanced regardless.
                    _ => groups.push(current),
                },
                Column::Close => {
                    groups.pop();
                }
            }
        }
    }
}

/// Whether a row's key is the column's name. Asked of every cell of a table, for keys of a
/// few bytes: compared in machine words in place, where `==` calls `memcmp`, whose call and
/// set-up took a third of a 10,000-row table's encode (a sampled profile of the codec bench's
/// payload (c)).
#[inline]
fn same_key(key: &str, name: &str) -> bool {
    let (key, name) = (key.as_bytes(), name.as_bytes());
    if key.len() != name.len() {
        return false;
    }
    match key.len() {
        0 => true,
        1..=7 => key.iter().zip(name).all(|(a, b)| a == b),
        8..=16 => {
            // The first and the last eight bytes, overlapping for a key under sixteen.
            let word = |bytes: &[u8], at: usize| {
                let mut eight = [0; 8];
                eight.copy_from_slice(&bytes[at..at + 8]);
                u64::from_ne_bytes(eight)
            };
            let last = key.len() - 8;
            word(key, 0) == word(name, 0) && word(key, last) == word(name, last)
        }
        _ => key == name,
    }
}

fn is_primitive(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayShape {
    Primitives,
    /// Every element an array of primitives.
    PrimitiveArrays,
    /// Every element an object.
    Objects,
    Mixed,
}

fn shape_of(items: &[Value]) -> ArrayShape {
    let mut primitives = true;
    let mut objects = true;
    let mut primitive_arrays = true;
    for item in items {
        match item {
            Value::Object(_) => {
                primitives = false;
                primitive_arrays = false;
            }
            Value::Array(inner) => {
                primitives = false;
                objects = false;
                if primitive_arrays && !inner.iter().all(is_primitive) {
                    primitive_arrays = false;
                }
            }
            _ => {
                objects = false;
                primitive_arrays = false;
            }
        }
        if !primitives && !objects && !primitive_arrays {
            return ArrayShape::Mixed;
        }
    }
    if primitives {
        ArrayShape::Primitives
    } else if objects {
        ArrayShape::Objects
    } else if primitive_arrays {
        ArrayShape::PrimitiveArrays
    } else {
        ArrayShape::Mixed
    }
}

/// The field list of an array of uniform objects, or `None` when the array
/// must use list form.
fn table_columns(rows: &[Value]) -> Option<Vec<Column<'_>>> {
    let mut maps = Vec::with_capacity(rows.len());
    for row in rows {
        match row {
            Value::Object(map) => maps.push(map),
            _ => return None,
        }
    }
    let mut columns = Vec::new();
    classify(&maps, 0, &mut columns).then_some(columns)
}

/// The field list of a keyed table: at least two entries, each a non-empty
/// object, all uniform.
fn keyed_columns(map: &Map<String, Value>) -> Option<Vec<Column<'_>>> {
    if map.len() < 2 {
        return None;
    }
    // Asked of every object with two entries or more; nearly all have a primitive among
    // their values, which settles it before anything is allocated.
    let width = match map.values().next() {
        Some(Value::Object(first)) if !first.is_empty() => first.len(),
        _ => return None,
    };
    if !map
        .values()
        .all(|value| matches!(value, Value::Object(inner) if inner.len() == width))
    {
        return None;
    }
    let maps: Vec<&Map<String, Value>> = map
        .values()
        .filter_map(|value| match value {
            Value::Object(inner) => Some(inner),
            _ => None,
        })
        .collect();
    let mut columns = Vec::new();
    classify(&maps, 0, &mut columns).then_some(columns)
}

/// Whether `objects` share one non-empty key set whose columns are each all
/// primitives (a leaf) or all uniform non-empty objects (a nested group,
/// classified the same way). Appends the field list in the first object's order.
fn classify<'a>(
    objects: &[&'a Map<String, Value>],
    depth: usize,
    columns: &mut Vec<Column<'a>>,
) -> bool {
    let Some(first) = objects.first() else {
        return false;
    };
    let width = first.len();
    if width == 0 {
        return false;
    }
    // One pass over every row, in each row's own order: rows usually list
    // their keys like the first row, so a lookup is needed only when they don't.
    let mut all_primitive = vec![true; width];
    let mut all_objects = vec![true; width];
    for object in objects {
        if object.len() != width {
            return false;
        }
        let mut entries = object.iter();
        for (index, key) in first.keys().enumerate() {
            let value = match entries.next() {
                Some((k, v)) if same_key(k, key) => v,
                _ => match object.get(key) {
                    Some(v) => v,
                    None => return false,
                },
            };
            all_primitive[index] &= is_primitive(value);
            all_objects[index] &= matches!(value, Value::Object(inner) if !inner.is_empty());
        }
    }
    for (index, key) in first.keys().enumerate() {
        if all_primitive[index] {
            columns.push(Column::Leaf(key));
            continue;
        }
        if !all_objects[index] || depth + 1 >= FIELD_GROUP_DEPTH_LIMIT {
            return false;
        }
        let nested: Vec<&'a Map<String, Value>> = objects
            .iter()
            .filter_map(|object| match object.get(key) {
                Some(Value::Object(inner)) => Some(inner),
                _ => None,
            })
            .collect();
        columns.push(Column::Open(key));
        if !classify(&nested, depth + 1, columns) {
            return false;
        }
        columns.push(Column::Close);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn encode(value: &Value) -> String {
        let mut out = String::new();
        encode_into(value, &EncodeOptions::default(), &mut out);
        out
    }

    #[test]
    fn objects_and_primitives() {
        assert_eq!(encode(&json!({"id": 1, "name": "Ada"})), "id: 1\nname: Ada");
        assert_eq!(encode(&json!({})), "");
        assert_eq!(encode(&json!("\u{feff}x")), "\"\u{feff}x\"");
        assert_eq!(encode(&json!({"a": {"b": {}}})), "a:\n  b:");
    }

    #[test]
    fn fields_after_a_container_keep_their_place() {
        // The leading primitives are written before the task stack is used; whatever follows
        // the first container comes after that container's own lines.
        assert_eq!(
            encode(
                &json!({"a": 1, "b": {"c": 2, "d": [3, 4]}, "e": "x", "f": [{"g": 5}], "h": null})
            ),
            "a: 1\nb:\n  c: 2\n  d[2]: 3,4\ne: x\nf[1]{g}:\n  5\nh: null"
        );
        assert_eq!(encode(&json!({"a": [], "b": 1})), "a: []\nb: 1");
    }

    #[test]
    fn tables_and_groups() {
        assert_eq!(
            encode(&json!({"t": [{"a": 1, "b": "x"}, {"b": "y", "a": 2}]})),
            "t[2]{a,b}:\n  1,x\n  2,y"
        );
        assert_eq!(
            encode(&json!([{"a": {"b": 1, "c": 2}}, {"a": {"c": 4, "b": 3}}])),
            "[2]{a{b,c}}:\n  1,2\n  3,4"
        );
        assert_eq!(
            encode(&json!({"m": {"x": {"v": 1}, "y": {"v": 2}}})),
            "m[2:]{v}:\n  x: 1\n  y: 2"
        );
    }

    #[test]
    fn objects_of_other_sizes_or_kinds_keep_list_form() {
        // The first two rows agree, the third is wider: no table.
        assert_eq!(
            encode(&json!({"t": [{"a": 1}, {"a": 2}, {"a": 3, "b": 4}]})),
            "t[3]:\n  - a: 1\n  - a: 2\n  - a: 3\n    b: 4"
        );
        // Same sizes, other keys: no table either.
        assert_eq!(
            encode(&json!({"t": [{"a": 1}, {"b": 2}]})),
            "t[2]:\n  - a: 1\n  - b: 2"
        );
        // A keyed table needs every value an object of one size.
        assert_eq!(
            encode(&json!({"m": {"x": {"v": 1}, "y": {"v": 2, "w": 3}}})),
            "m:\n  x:\n    v: 1\n  y:\n    v: 2\n    w: 3"
        );
        assert_eq!(
            encode(&json!({"m": {"x": {"v": 1}, "y": 2}})),
            "m:\n  x:\n    v: 1\n  y: 2"
        );
    }

    /// A flat table is written while its rows are checked: a late row unlike the first takes
    /// back what was written, and the array is in list form as if it had been seen first.
    #[test]
    fn a_late_row_unlike_the_first_takes_the_table_back() {
        let late_rows = [
            // Another key, the same size.
            (json!({"c": 5, "b": 6}), "  - c: 5\n    b: 6"),
            // A container in a column.
            (json!({"a": 5, "b": [6]}), "  - a: 5\n    b[1]: 6"),
            (
                json!({"a": {"x": 5}, "b": 6}),
                "  - a:\n      x: 5\n    b: 6",
            ),
            // Not an object.
            (json!(5), "  - 5"),
        ];
        for (late, written) in late_rows {
            let rows = json!([{"a": 1, "b": 2}, {"b": 4, "a": 3}, late]);
            let listed = format!("[3]:\n  - a: 1\n    b: 2\n  - b: 4\n    a: 3\n{written}");
            assert_eq!(encode(&rows), listed, "{rows}");
            // In a field, after another field, and as a list item's first field.
            let field = json!({"k": 0, "t": rows});
            assert_eq!(encode(&field), format!("k: 0\nt{listed}"), "{field}");
            let item = json!([{"t": rows, "k": 0}]);
            let under_hyphen = listed.replace('\n', "\n    ");
            assert_eq!(
                encode(&item),
                format!("[1]:\n  - t{under_hyphen}\n    k: 0"),
                "{item}"
            );
        }
        // The same rows with a late row like the first: one table.
        assert_eq!(
            encode(&json!([{"a": 1, "b": 2}, {"b": 4, "a": 3}, {"a": 5, "b": "x"}])),
            "[3]{a,b}:\n  1,2\n  3,4\n  5,x"
        );
    }

    /// Every length the word compare takes (and the lengths around it), equal and unlike at
    /// every byte, gives what `==` gives.
    #[test]
    fn keys_compare_as_text_at_every_length() {
        for length in 0..=20 {
            let key: String = (0..length).map(|i| char::from(b'a' + i as u8)).collect();
            assert!(same_key(&key, &key.clone()), "{key}");
            assert!(!same_key(&key, &format!("{key}x")), "{key}");
            for at in 0..length {
                let mut other = key.clone().into_bytes();
                other[at] = b'Z';
                let other = String::from_utf8(other).expect("ASCII");
                assert_eq!(same_key(&key, &other), key == other, "{key} {other}");
            }
        }
    }

    #[test]
    fn field_groups_beyond_the_cap_use_list_form() {
        let mut leaf = json!({"x": 1});
        for _ in 0..FIELD_GROUP_DEPTH_LIMIT + 1 {
            leaf = json!({ "g": leaf });
        }
        let text = encode(&Value::Array(vec![leaf.clone(), leaf]));
        assert!(text.starts_with("[2]:\n  - g:"), "{text}");
    }

    #[test]
    fn list_items() {
        assert_eq!(
            encode(&json!({"items": [{"a": [1, 2], "b": {"c": 1}}, {"d": {"e": 1}, "f": 2}, {}]})),
            "items[3]:\n  - a[2]: 1,2\n    b:\n      c: 1\n  - d:\n      e: 1\n    f: 2\n  -"
        );
        assert_eq!(
            encode(&json!([[{"a": 1}], 3, [[1], 2]])),
            "[3]:\n  - [1]:\n    - a: 1\n  - 3\n  - [2]:\n    - [1]: 1\n    - 2"
        );
    }
}
