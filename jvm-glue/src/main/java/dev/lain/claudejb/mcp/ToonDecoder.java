package dev.lain.claudejb.mcp;

import static dev.lain.claudejb.mcp.ToonHeader.findUnquoted;
import static dev.lain.claudejb.mcp.ToonHeader.findUnquoted2;
import static dev.lain.claudejb.mcp.ToonHeader.skipSpaces;
import static dev.lain.claudejb.mcp.ToonHeader.trimSpaces;
import static dev.lain.claudejb.mcp.ToonNumber.decodeNumber;
import static dev.lain.claudejb.mcp.ToonNumber.isAsciiDigit;
import static dev.lain.claudejb.mcp.ToonOptions.MAX_DEPTH;
import static dev.lain.claudejb.mcp.ToonQuote.decodeQuoted;
import static dev.lain.claudejb.mcp.ToonQuote.findClosingQuote;

import dev.lain.claudejb.mcp.Toon.DecodeException;
import dev.lain.claudejb.mcp.ToonHeader.Column;
import dev.lain.claudejb.mcp.ToonHeader.Fields;
import dev.lain.claudejb.mcp.ToonScan.Line;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The decoder ({@code rust/protocol/src/toon/decode.rs}): a single forward pass over the lines,
 * building values with an explicit stack of open containers instead of recursion, so no input
 * exhausts the stack. Objects and list-form arrays that span lines are frames on the stack; rows
 * of tabular arrays, keyed tables and inline arrays hold only primitives and are decoded in place.
 * Strict mode rejects duplicate keys; non-strict mode lets the last one win, as the spec says.
 *
 * <p>What the value takes is counted while it is built and capped by a {@link DecodeBudget}: every
 * container, entry, element, string and number is charged before it is added (a table row
 * before the row is built), so a document that would expand past the budget fails at the line
 * where it would, before the value exists.
 */
final class ToonDecoder {
    /** Where a finished container goes: the root, a key of the enclosing object, or the enclosing list. */
    private static final class Slot {
        static final Slot ROOT = new Slot(null, null, 0);
        static final Slot PUSH = new Slot(null, null, 0);
        final String key;
        final Line line;
        final int offset;

        Slot(String key, Line line, int offset) {
            this.key = key;
            this.line = line;
            this.offset = offset;
        }
    }

    private static final class Frame {
        final boolean isObject;
        final Map<String, Object> map;
        final List<Object> items;
        final Slot slot;
        // Object frames.
        int minDepth;
        int fieldDepth = -1;
        // List frames.
        int baseDepth;
        int itemDepth;
        long declared;
        Line header;
        int firstItemLine = -1;

        private Frame(boolean isObject, Slot slot) {
            this.isObject = isObject;
            this.map = isObject ? new LinkedHashMap<>() : null;
            this.items = isObject ? null : new ArrayList<>();
            this.slot = slot;
        }

        static Frame object(Slot slot, int minDepth, int fieldDepth) {
            Frame frame = new Frame(true, slot);
            frame.minDepth = minDepth;
            frame.fieldDepth = fieldDepth;
            return frame;
        }

        static Frame list(Slot slot, int baseDepth, int itemDepth, long declared, Line header) {
            Frame frame = new Frame(false, slot);
            frame.baseDepth = baseDepth;
            frame.itemDepth = itemDepth;
            frame.declared = declared;
            frame.header = header;
            return frame;
        }
    }

    final String text;
    final ToonScan lines;
    final boolean strict;
    final List<Frame> frames = new ArrayList<>();
    final DecodeBudget budget;
    /** The cells of the row being read, reused from row to row. */
    final List<Object> rowCells = new ArrayList<>();
    Object result;
    boolean hasResult;

    /**
     * Decodes {@code text}; {@code indent} is the spaces per level, {@code strict} the mode, and
     * the value may take the default budget ({@link DecodeBudget#defaultFor}).
     */
    static Object decode(String text, int indent, boolean strict) {
        return decode(text, indent, strict, DecodeBudget.defaultFor(text.length()));
    }

    /** {@link #decode(String, int, boolean)} within {@code maxDecodedBytes} ({@link DecodeBudget#UNLIMITED}: none). */
    static Object decode(String text, int indent, boolean strict, long maxDecodedBytes) {
        if (indent < 1) {
            throw new DecodeException(1, 1, "indent must be at least 1");
        }
        return new ToonDecoder(text, indent, strict, new DecodeBudget(maxDecodedBytes, text.length())).document();
    }

    private ToonDecoder(String text, int indent, boolean strict, DecodeBudget budget) {
        this.text = text;
        this.budget = budget;
        this.lines = new ToonScan(text, indent, strict, budget);
        this.strict = strict;
    }

    /** Takes {@code bytes} from the budget, or fails at {@code line} once it is spent. */
    void charge(Line line, long bytes) {
        if (!budget.take(bytes)) {
            throw errorLine(line, budget.message());
        }
    }

    /** A new empty object, charged. */
    Map<String, Object> newObject(Line line) {
        charge(line, DecodeBudget.CONTAINER_BYTES);
        return new LinkedHashMap<>();
    }

    /** A new empty list, charged. */
    List<Object> newList(Line line) {
        charge(line, DecodeBudget.CONTAINER_BYTES);
        return new ArrayList<>();
    }

    /**
     * What the objects of one row take besides their cells: the row's map, an entry for every
     * field, and a map and an entry for every group. The field names are the header's strings,
     * shared by every row.
     */
    static long rowCost(Fields fields) {
        long cost = DecodeBudget.CONTAINER_BYTES;
        for (Column op : fields.ops) {
            if (op == Column.CLOSE) {
                continue;
            }
            cost += DecodeBudget.ENTRY_BYTES + (op.open ? DecodeBudget.CONTAINER_BYTES : 0);
        }
        return cost;
    }

    DecodeException errorAt(Line line, int offset, String message) {
        int clamped = Math.max(line.start, Math.min(offset, text.length()));
        return new DecodeException(line.number, text.codePointCount(line.start, clamped) + 1, message);
    }

    DecodeException errorLine(Line line, String message) {
        return errorAt(line, line.content, message);
    }

    DecodeException overIndented(Line line, int expected) {
        return errorLine(line, "over-indented line: expected depth " + expected + ", found " + line.depth);
    }

    String content(Line line) {
        return text.substring(line.content, line.end);
    }

    Frame top() {
        return frames.isEmpty() ? null : frames.get(frames.size() - 1);
    }

    void checkNesting(Line line, int extra) {
        if (frames.size() + extra > MAX_DEPTH) {
            throw errorLine(line, "nesting deeper than the limit of " + MAX_DEPTH);
        }
    }

    ToonHeader headerAt(Line line, int offset) {
        try {
            return ToonHeader.parse(text, offset, line.end, Math.max(0, MAX_DEPTH - frames.size()), strict,
                    budget);
        } catch (ToonContentError e) {
            throw errorAt(line, e.at, e.getMessage());
        }
    }

    Object document() {
        try {
            return documentUnchecked();
        } catch (ToonContentError e) {
            throw new DecodeException(1, 1, e.getMessage());
        }
    }

    private Object documentUnchecked() {
        Line first = lines.peek();
        if (first == null) {
            return newObject(first);
        }
        if (first.depth != 0) {
            throw overIndented(first, 0);
        }
        String content = content(first);
        if (content.equals("[]")) {
            lines.next();
            checkNesting(first, 1);
            return finishRoot(newList(first));
        }
        if (content.startsWith("[")) {
            ToonHeader header = headerAt(first, first.content);
            if (header != null) {
                lines.next();
                Object[] value = arrayFromHeader(header, first, 0, Slot.ROOT);
                if (value != null) {
                    return finishRoot(value[0]);
                }
                run();
                return finishRoot(result);
            }
        }
        lines.next();
        Line following = lines.peek();
        boolean hasColon = findUnquoted(text, ':', first.content, first.end) >= 0;
        if (!hasColon) {
            if (following == null) {
                return primitive(first, first.content, first.end);
            }
            if (following.depth == 0) {
                throw errorLine(first, "a document with several lines must start with a key-value or array header line");
            }
        }
        checkNesting(first, 1);
        charge(first, DecodeBudget.CONTAINER_BYTES);
        frames.add(Frame.object(Slot.ROOT, 0, 0));
        fieldLine(first, first.content, 0);
        run();
        return result;
    }

    Object finishRoot(Object value) {
        Line extra = lines.peek();
        if (extra != null) {
            throw errorLine(extra, "unexpected content after the document root");
        }
        return value;
    }

    void run() {
        Frame frame;
        while ((frame = top()) != null) {
            if (frame.isObject) {
                Line line = lines.peek();
                if (line == null || line.depth < frame.minDepth) {
                    closeFrame();
                    continue;
                }
                if (frame.fieldDepth < 0) {
                    frame.fieldDepth = line.depth;
                }
                if (line.depth != frame.fieldDepth) {
                    throw overIndented(line, frame.fieldDepth);
                }
                lines.next();
                fieldLine(line, line.content, frame.fieldDepth);
            } else {
                if (strict && frame.items.size() >= frame.declared) {
                    closeFrame();
                    continue;
                }
                Line line = lines.peek();
                if (line == null || line.depth <= frame.baseDepth) {
                    closeFrame();
                    continue;
                }
                if (line.depth != frame.itemDepth) {
                    throw overIndented(line, frame.itemDepth);
                }
                String content = content(line);
                if (!(content.equals("-") || content.startsWith("- "))) {
                    closeFrame();
                    continue;
                }
                if (frame.firstItemLine < 0) {
                    frame.firstItemLine = line.number;
                }
                lines.next();
                listItem(line, frame.itemDepth);
            }
        }
    }

    void closeFrame() {
        Frame frame = frames.remove(frames.size() - 1);
        if (frame.isObject) {
            deliver(frame.map, frame.slot);
            return;
        }
        checkNoBlankLines(frame.firstItemLine, lines.lastConsumed, "a list array");
        if (strict) {
            if (frame.items.size() != frame.declared) {
                throw countError(frame.header, frame.declared, frame.items.size(), "list items");
            }
            Line next = lines.peek();
            if (next != null && next.depth == frame.itemDepth && content(next).startsWith("- ")) {
                throw errorLine(next, "more list items than the declared " + frame.declared);
            }
        }
        deliver(frame.items, frame.slot);
    }

    void deliver(Object value, Slot slot) {
        if (slot == Slot.ROOT) {
            result = value;
            hasResult = true;
        } else if (slot == Slot.PUSH) {
            Frame top = top();
            if (top != null && !top.isObject) {
                charge(top.header, DecodeBudget.ELEMENT_BYTES);
                top.items.add(value);
            }
        } else {
            insert(slot.key, value, slot.line, slot.offset);
        }
    }

    void insert(String key, Object value, Line line, int offset) {
        charge(line, DecodeBudget.ENTRY_BYTES + DecodeBudget.string(key.length()));
        Frame top = top();
        if (top == null || !top.isObject) {
            return;
        }
        if (top.map.containsKey(key) && strict) {
            throw errorAt(line, offset, "duplicate key \"" + key + "\"");
        }
        // Non-strict mode follows the spec: the last duplicate wins.
        top.map.put(key, value);
    }

    void pushFrame(Frame frame, Line line) {
        checkNesting(line, 1);
        charge(line, DecodeBudget.CONTAINER_BYTES);
        frames.add(frame);
    }

    DecodeException countError(Line line, long declared, int found, String what) {
        return errorLine(line, "expected " + declared + " " + what + ", found " + found);
    }

    void checkNoBlankLines(int first, int last, String what) {
        if (first < 0 || !strict) {
            return;
        }
        int blank = lines.firstBlankLineAfter(first);
        if (blank >= 0 && blank < last) {
            throw new DecodeException(blank, 1, "blank lines are not allowed inside " + what + " in strict mode");
        }
    }

    int contentDepth(int baseDepth) {
        Line next = lines.peek();
        if (next != null && next.depth > baseDepth + 1) {
            if (strict) {
                throw errorLine(next, "indentation jumps more than one level: expected depth "
                        + (baseDepth + 1) + ", found " + next.depth);
            }
            return next.depth;
        }
        return baseDepth + 1;
    }

    void fieldLine(Line line, int from, int depth) {
        int at = from;
        while (at < line.end) {
            char c = text.charAt(at);
            if (c == ':' || c == '[' || c == '"') {
                break;
            }
            at++;
        }
        if (at < line.end && text.charAt(at) == ':') {
            plainField(line, from, depth, at);
            return;
        }
        if (at < line.end && text.charAt(at) == '"' && at == from) {
            int close = findClosingQuote(text, from, line.end);
            if (close >= 0 && (close + 1 >= line.end || text.charAt(close + 1) != '[')) {
                plainField(line, from, depth, -1);
                return;
            }
        }
        if (at >= line.end) {
            plainField(line, from, depth, -1);
            return;
        }
        ToonHeader header = headerAt(line, from);
        if (header != null) {
            headerField(header, line, from, depth);
        } else {
            plainField(line, from, depth, -1);
        }
    }

    void headerField(ToonHeader header, Line line, int from, int depth) {
        if (header.key == null) {
            throw errorAt(line, from, header.keyed
                    ? "a keyless keyed header is only valid at the document root"
                    : "a keyless array header is only valid at the document root or as a list item");
        }
        Slot slot = new Slot(header.key, line, from);
        Object[] value = arrayFromHeader(header, line, depth, slot);
        if (value != null) {
            insert(header.key, value[0], line, from);
        }
    }

    void plainField(Line line, int from, int depth, int colon) {
        String key;
        int afterColon;
        if (from < line.end && text.charAt(from) == '"') {
            Object[] quoted;
            try {
                quoted = decodeQuoted(text, from, line.end);
            } catch (ToonContentError e) {
                throw errorAt(line, e.at, e.getMessage());
            }
            key = (String) quoted[0];
            int c = skipSpaces(text, (Integer) quoted[1], line.end);
            if (c >= line.end || text.charAt(c) != ':') {
                throw errorAt(line, c, "missing colon after key");
            }
            afterColon = c + 1;
        } else {
            if (colon < 0) {
                colon = findUnquoted(text, ':', from, line.end);
                if (colon < 0) {
                    throw errorAt(line, from, "missing colon after key");
                }
            }
            key = trimSpaces(text.substring(from, colon));
            afterColon = colon + 1;
        }
        int valueStart = skipSpaces(text, afterColon, line.end);
        if (valueStart >= line.end) {
            Line next = lines.peek();
            if (next != null && next.depth > depth) {
                if (strict && next.depth > depth + 1) {
                    throw errorLine(next, "indentation jumps more than one level: expected depth "
                            + (depth + 1) + ", found " + next.depth);
                }
                pushFrame(Frame.object(new Slot(key, line, from), depth + 1, -1), line);
                return;
            }
            checkNesting(line, 1);
            insert(key, newObject(line), line, from);
            return;
        }
        Object value;
        if (text.substring(valueStart, line.end).equals("[]")) {
            checkNesting(line, 1);
            value = newList(line);
        } else {
            value = primitive(line, valueStart, line.end);
        }
        insert(key, value, line, from);
    }

    void listItem(Line line, int itemDepth) {
        String content = content(line);
        if (content.equals("-")) {
            checkNesting(line, 1);
            deliver(newObject(line), Slot.PUSH);
            return;
        }
        int from = skipSpaces(text, line.content + 1, line.end);
        String after = text.substring(from, line.end);
        if (after.equals("[]")) {
            checkNesting(line, 1);
            deliver(newList(line), Slot.PUSH);
            return;
        }
        if (after.indexOf('[') >= 0 && after.indexOf(':') >= 0) {
            ToonHeader header = headerAt(line, from);
            if (header != null) {
                if (header.key == null) {
                    if (header.keyed || header.fields != null) {
                        throw errorAt(line, from, header.keyed
                                ? "a keyless keyed header is only valid at the document root"
                                : "a keyless header with a field list is only valid at the document root");
                    }
                    Object[] value = arrayFromHeader(header, line, itemDepth, Slot.PUSH);
                    if (value != null) {
                        deliver(value[0], Slot.PUSH);
                    }
                    return;
                }
                pushFrame(Frame.object(Slot.PUSH, itemDepth + 1, itemDepth + 1), line);
                headerField(header, line, from, itemDepth + 1);
                return;
            }
        }
        if (findUnquoted(text, ':', from, line.end) >= 0) {
            pushFrame(Frame.object(Slot.PUSH, itemDepth + 1, itemDepth + 1), line);
            plainField(line, from, itemDepth + 1, -1);
            return;
        }
        deliver(primitive(line, from, line.end), Slot.PUSH);
    }

    /** The array's value in a one-element array when complete; {@code null} after pushing a list frame. */
    Object[] arrayFromHeader(ToonHeader header, Line line, int baseDepth, Slot slot) {
        checkNesting(line, header.fields != null ? 2 + header.fields.groupDepth : 1);
        if (header.keyed) {
            return new Object[] {keyedTable(header, line, baseDepth)};
        }
        if (header.inlineStart >= 0) {
            List<Object> values = newList(line);
            splitCells(line, header.inlineStart, line.end, header.delimiter, values);
            if (strict && values.size() != header.length) {
                throw countError(line, header.length, values.size(), "inline values");
            }
            return new Object[] {values};
        }
        if (header.fields != null) {
            return new Object[] {table(header, line, baseDepth)};
        }
        int itemDepth = contentDepth(baseDepth);
        pushFrame(Frame.list(slot, baseDepth, itemDepth, header.length, line), line);
        return null;
    }

    List<Object> table(ToonHeader header, Line line, int baseDepth) {
        int rowDepth = contentDepth(baseDepth);
        List<Object> rows = newList(line);
        // Every row is an element and the objects of the fields, charged before it is built.
        long rowCost = DecodeBudget.ELEMENT_BYTES + rowCost(header.fields);
        int firstRow = -1;
        int lastRow = line.number;
        while (!strict || rows.size() < header.length) {
            Line next = lines.peek();
            if (next == null || next.depth <= baseDepth) {
                break;
            }
            if (next.depth != rowDepth) {
                throw overIndented(next, rowDepth);
            }
            if (!isRow(next, header.delimiter)) {
                break;
            }
            lines.next();
            if (firstRow < 0) {
                firstRow = next.number;
            }
            lastRow = next.number;
            charge(next, rowCost);
            rows.add(rowObject(next, next.content, header.fields, header.delimiter));
        }
        checkNoBlankLines(firstRow, lastRow, "a tabular array");
        if (strict) {
            if (rows.size() != header.length) {
                throw countError(line, header.length, rows.size(), "tabular rows");
            }
            Line next = lines.peek();
            if (next != null && next.depth == rowDepth && !content(next).startsWith("- ")
                    && isRow(next, header.delimiter)) {
                throw errorLine(next, "more tabular rows than the declared " + header.length);
            }
        }
        return rows;
    }

    /** A row has no unquoted colon before its first unquoted delimiter. */
    boolean isRow(Line line, char delimiter) {
        int at = findUnquoted2(text, delimiter, ':', line.content, line.end);
        return at < 0 || text.charAt(at) != ':';
    }

    Map<String, Object> keyedTable(ToonHeader header, Line line, int baseDepth) {
        int entryDepth = contentDepth(baseDepth);
        Map<String, Object> map = newObject(line);
        long rowCost = rowCost(header.fields);
        int firstEntry = -1;
        int lastEntry = line.number;
        Line next;
        while ((next = lines.peek()) != null) {
            if (next.depth <= baseDepth) {
                break;
            }
            if (next.depth != entryDepth) {
                throw overIndented(next, entryDepth);
            }
            String key;
            int afterColon;
            if (text.charAt(next.content) == '"') {
                Object[] quoted;
                try {
                    quoted = decodeQuoted(text, next.content, next.end);
                } catch (ToonContentError e) {
                    throw errorAt(next, e.at, e.getMessage());
                }
                key = (String) quoted[0];
                int colon = skipSpaces(text, (Integer) quoted[1], next.end);
                if (colon >= next.end || text.charAt(colon) != ':') {
                    throw errorAt(next, colon, "missing colon after entry key");
                }
                afterColon = colon + 1;
            } else {
                int colon = findUnquoted(text, ':', next.content, next.end);
                if (colon < 0) {
                    throw errorLine(next, "expected an entry row (`key: cells`) inside a keyed table");
                }
                key = trimSpaces(text.substring(next.content, colon));
                afterColon = colon + 1;
            }
            lines.next();
            if (firstEntry < 0) {
                firstEntry = next.number;
            }
            lastEntry = next.number;
            charge(next, DecodeBudget.ENTRY_BYTES + DecodeBudget.string(key.length()) + rowCost);
            Object value = rowObject(next, afterColon, header.fields, header.delimiter);
            if (map.containsKey(key) && strict) {
                throw errorLine(next, "duplicate entry key \"" + key + "\"");
            }
            map.put(key, value);
        }
        if (strict && map.size() != header.length) {
            throw countError(line, header.length, map.size(), "keyed entries");
        }
        checkNoBlankLines(firstEntry, lastEntry, "a keyed table");
        return map;
    }

    Map<String, Object> rowObject(Line line, int from, Fields fields, char delimiter) {
        List<Object> cells = rowCells;
        cells.clear();
        int trimmedFrom = skipSpaces(text, from, line.end);
        if (trimmedFrom < line.end) {
            splitCells(line, trimmedFrom, line.end, delimiter, cells);
        }
        if (cells.size() != fields.leafCount) {
            throw countError(line, fields.leafCount, cells.size(), "cells in the row");
        }
        // The cells were charged as elements while split; they now sit in the row's entries,
        // which are charged already.
        budget.giveBack(cells.size() * DecodeBudget.ELEMENT_BYTES);
        Map<String, Object> row = buildRow(fields, cells);
        cells.clear();
        return row;
    }

    /** Leaves take cells in order; groups become nested objects. */
    static Map<String, Object> buildRow(Fields fields, List<Object> cells) {
        Map<String, Object> current = new LinkedHashMap<>();
        if (fields.groupDepth == 0) {
            int cell = 0;
            for (Column op : fields.ops) {
                current.put(op.name, cells.get(cell++));
            }
            return current;
        }
        List<Map<String, Object>> open = new ArrayList<>();
        List<String> openNames = new ArrayList<>();
        Iterator<Object> cell = cells.iterator();
        for (Column op : fields.ops) {
            if (op == Column.CLOSE) {
                Map<String, Object> parent = open.remove(open.size() - 1);
                parent.put(openNames.remove(openNames.size() - 1), current);
                current = parent;
            } else if (op.open) {
                open.add(current);
                openNames.add(op.name);
                current = new LinkedHashMap<>();
            } else {
                current.put(op.name, cell.next());
            }
        }
        return current;
    }

    void splitCells(Line line, int start, int end, char delimiter, List<Object> out) {
        int cellStart = start;
        while (true) {
            int cellEnd = findUnquoted(text, delimiter, cellStart, end);
            if (cellEnd < 0) {
                cellEnd = end;
            }
            charge(line, DecodeBudget.ELEMENT_BYTES);
            out.add(primitive(line, cellStart, cellEnd));
            if (cellEnd >= end) {
                return;
            }
            cellStart = cellEnd + 1;
        }
    }

    Object primitive(Line line, int start, int end) {
        int tokenStart = skipSpaces(text, start, end);
        int tokenEnd = end;
        while (tokenEnd > tokenStart && text.charAt(tokenEnd - 1) == ' ') {
            tokenEnd--;
        }
        if (tokenStart == tokenEnd) {
            return "";
        }
        char first = text.charAt(tokenStart);
        if (first == '"') {
            Object[] quoted;
            try {
                quoted = decodeQuoted(text, tokenStart, tokenEnd);
            } catch (ToonContentError e) {
                throw errorAt(line, e.at, e.getMessage());
            }
            if ((Integer) quoted[1] != tokenEnd) {
                throw errorAt(line, (Integer) quoted[1], "unexpected characters after closing quote");
            }
            charge(line, DecodeBudget.string(((String) quoted[0]).length()));
            return quoted[0];
        }
        String token = text.substring(tokenStart, tokenEnd);
        if (token.equals("true")) {
            return Boolean.TRUE;
        }
        if (token.equals("false")) {
            return Boolean.FALSE;
        }
        if (token.equals("null")) {
            return null;
        }
        if (first == '-' || isAsciiDigit(first)) {
            BigDecimal number = decodeNumber(token);
            charge(line, number != null ? DecodeBudget.number(token) : DecodeBudget.string(token.length()));
            return number != null ? number : token;
        }
        charge(line, DecodeBudget.string(token.length()));
        return token;
    }
}
