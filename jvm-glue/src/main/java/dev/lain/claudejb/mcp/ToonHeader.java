package dev.lain.claudejb.mcp;

import static dev.lain.claudejb.mcp.ToonNumber.isAsciiDigit;
import static dev.lain.claudejb.mcp.ToonOptions.DELIMITER;
import static dev.lain.claudejb.mcp.ToonOptions.DELIMITERS;
import static dev.lain.claudejb.mcp.ToonOptions.display;
import static dev.lain.claudejb.mcp.ToonQuote.decodeQuoted;
import static dev.lain.claudejb.mcp.ToonQuote.findClosingQuote;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Array headers ({@code rust/protocol/src/toon/header.rs}): {@code key[N]:}, {@code key[N|]{a|b}:},
 * keyed {@code key[N:]{a,b}:}, nested field groups {@code {id,customer{name,city}}}, and the
 * quote-aware scanning they need. One parsed header is an instance of this class.
 */
final class ToonHeader {
    /** One column of a tabular header: a leaf, the opening of a field group, or its close. */
    static final class Column {
        static final Column CLOSE = new Column(null, false);
        final String name;
        final boolean open;

        Column(String name, boolean open) {
            this.name = name;
            this.open = open;
        }

        boolean isLeaf() {
            return name != null && !open;
        }
    }

    /** A header's field list flattened: leaves are names, groups open with {@code "{name"} markers. */
    static final class Fields {
        final List<Column> ops = new ArrayList<>();
        int leafCount;
        int groupDepth;
    }

    String key;
    long length;
    char delimiter = DELIMITER;
    boolean keyed;
    Fields fields;
    int inlineStart = -1;

    private ToonHeader() {
    }

    /**
     * Parses {@code text[from, limit)} as an array header; {@code null} when the line is not one
     * (no bracket before the first colon). A line that starts to be a header but breaks its
     * grammar is an error in both modes. Each field name is charged to {@code budget} as it is
     * read.
     */
    static ToonHeader parse(String text, int from, int limit, int maxGroupDepth, boolean strict,
                            DecodeBudget budget) {
        int bracketStart;
        if (from < limit && text.charAt(from) == '"') {
            int close = findClosingQuote(text, from, limit);
            if (close < 0 || close + 1 >= limit || text.charAt(close + 1) != '[') {
                return null;
            }
            bracketStart = close + 1;
        } else {
            bracketStart = findUnquoted(text, '[', from, limit);
            if (bracketStart < 0) {
                return null;
            }
        }
        int firstColon = findUnquoted(text, ':', from, limit);
        if (firstColon < 0 || firstColon < bracketStart) {
            return null;
        }
        int bracketEnd = findUnquoted(text, ']', bracketStart, limit);
        if (bracketEnd < 0) {
            throw new ToonContentError(bracketStart, "unterminated bracket segment");
        }
        int braceEnd = bracketEnd + 1;
        int braceStart = findUnquoted(text, '{', bracketEnd, limit);
        if (braceStart >= 0) {
            int colonAfter = findUnquoted(text, ':', bracketEnd, limit);
            if (colonAfter >= 0 && braceStart < colonAfter) {
                if (braceStart != bracketEnd + 1) {
                    throw new ToonContentError(bracketEnd + 1, "unexpected text between bracket segment and field list");
                }
                int close = findMatchingBrace(text, braceStart, limit);
                if (close >= 0) {
                    braceEnd = close + 1;
                }
            }
        }
        int colon = findUnquoted(text, ':', Math.max(bracketEnd, braceEnd), limit);
        if (colon < 0) {
            throw new ToonContentError(bracketEnd, "missing colon after array header");
        }
        int gapStart = Math.max(bracketEnd + 1, braceEnd);
        if (colon != gapStart) {
            throw new ToonContentError(gapStart, "unexpected text between array header and colon");
        }
        ToonHeader header = new ToonHeader();
        if (bracketStart > from) {
            char before = text.charAt(bracketStart - 1);
            if (before == ' ' || before == '\t') {
                throw new ToonContentError(bracketStart, "unexpected whitespace between key and bracket segment");
            }
            header.key = parseName(text, from, bracketStart);
        }
        parseBracketSegment(text.substring(bracketStart + 1, bracketEnd), bracketStart + 1, header);
        if (braceStart >= 0 && braceStart < colon) {
            int close = findMatchingBrace(text, braceStart, limit);
            if (close >= 0 && close < colon) {
                for (char other : DELIMITERS.toCharArray()) {
                    if (other != header.delimiter) {
                        int at = findUnquoted(text, other, braceStart + 1, close);
                        if (at >= 0) {
                            throw new ToonContentError(at, "header delimiter mismatch: bracket declares \""
                                    + display(header.delimiter) + "\" but the field list uses \"" + display(other) + "\"");
                        }
                    }
                }
                header.fields = parseFields(text, braceStart + 1, close, header.delimiter, maxGroupDepth, strict,
                        budget);
            }
        }
        if (header.keyed && header.fields == null) {
            throw new ToonContentError(bracketStart, "a keyed header needs a field list");
        }
        int valueStart = skipSpaces(text, colon + 1, limit);
        if (valueStart < limit) {
            if (header.fields != null) {
                throw new ToonContentError(valueStart, "unexpected values after a header with a field list");
            }
            header.inlineStart = valueStart;
        }
        return header;
    }

    private static void parseBracketSegment(String segment, int at, ToonHeader header) {
        String rest = segment;
        if (!rest.isEmpty()) {
            char last = rest.charAt(rest.length() - 1);
            if (last == '\t' || last == '|') {
                header.delimiter = last;
                rest = rest.substring(0, rest.length() - 1);
            }
        }
        if (rest.endsWith(":")) {
            header.keyed = true;
            rest = rest.substring(0, rest.length() - 1);
        }
        boolean canonical = !rest.isEmpty() && (rest.equals("0") || rest.charAt(0) != '0');
        for (int i = 0; canonical && i < rest.length(); i++) {
            canonical = isAsciiDigit(rest.charAt(i));
        }
        if (!canonical) {
            throw new ToonContentError(at, "invalid array length \"" + segment
                    + "\": expected a non-negative integer without leading zeros");
        }
        // A length past any count still forms a header; no input can satisfy it.
        header.length = rest.length() > 18 ? Long.MAX_VALUE : Long.parseLong(rest);
    }

    private static int findMatchingBrace(String text, int open, int limit) {
        int depth = 0;
        int i = open;
        while (i < limit) {
            char c = text.charAt(i);
            if (c == '"') {
                i = findClosingQuote(text, i, limit);
                if (i < 0) {
                    return -1;
                }
            } else if (c == '{') {
                depth++;
            } else if (c == '}') {
                depth--;
                if (depth == 0) {
                    return i;
                }
            }
            i++;
        }
        return -1;
    }

    /** A key or field name in {@code text[from, to)}: quoted (the quotes must span it) or bare, spaces trimmed. */
    private static String parseName(String text, int from, int to) {
        int start = skipSpaces(text, from, to);
        int end = to;
        while (end > start && text.charAt(end - 1) == ' ') {
            end--;
        }
        if (start < end && text.charAt(start) == '"') {
            Object[] quoted = decodeQuoted(text, start, end);
            int after = (Integer) quoted[1];
            if (after != end) {
                throw new ToonContentError(after, "unexpected characters after closing quote");
            }
            return (String) quoted[0];
        }
        return text.substring(start, end);
    }

    static Fields parseFields(String text, int from, int limit, char delimiter, int maxGroupDepth,
                                      boolean strict, DecodeBudget budget) {
        Fields fields = new Fields();
        List<Set<String>> levels = new ArrayList<>();
        levels.add(new HashSet<>());
        int i = from;
        while (true) {
            int entryStart = i;
            int stop = i;
            while (stop < limit && text.charAt(stop) != '{' && text.charAt(stop) != '}' && text.charAt(stop) != delimiter) {
                if (text.charAt(stop) == '"') {
                    stop = findClosingQuote(text, stop, limit);
                    if (stop < 0) {
                        throw new ToonContentError(entryStart, "unterminated quoted field name");
                    }
                }
                stop++;
            }
            int terminator = stop < limit ? text.charAt(stop) : -1;
            if (trimSpaces(text.substring(entryStart, stop)).isEmpty()) {
                throw new ToonContentError(entryStart, terminator == '{'
                        ? "missing field name before nested field group" : "empty field name in field list");
            }
            if (terminator == '{' && (text.charAt(stop - 1) == ' ' || text.charAt(stop - 1) == '\t')) {
                throw new ToonContentError(stop, "unexpected whitespace before nested field group");
            }
            String name = parseName(text, entryStart, stop);
            if (!budget.take(DecodeBudget.COLUMN_BYTES + DecodeBudget.string(name.length()))) {
                throw new ToonContentError(entryStart, budget.message());
            }
            if (!levels.get(levels.size() - 1).add(name) && strict) {
                throw new ToonContentError(entryStart, "duplicate field name \"" + name + "\" in field list");
            }
            i = stop + 1;
            if (terminator == '{') {
                fields.ops.add(new Column(name, true));
                levels.add(new HashSet<>());
                fields.groupDepth = Math.max(fields.groupDepth, levels.size() - 1);
                if (levels.size() - 1 > maxGroupDepth) {
                    throw new ToonContentError(stop, "field groups nested deeper than the nesting limit");
                }
                continue;
            }
            fields.ops.add(new Column(name, false));
            fields.leafCount++;
            if (terminator == -1) {
                break;
            }
            if (terminator == '}') {
                int at = stop;
                while (true) {
                    if (levels.size() < 2) {
                        throw new ToonContentError(at, "unmatched brace in field list");
                    }
                    levels.remove(levels.size() - 1);
                    fields.ops.add(Column.CLOSE);
                    at = skipSpaces(text, at + 1, limit);
                    if (at < limit && text.charAt(at) == '}') {
                        continue;
                    }
                    if (at >= limit || text.charAt(at) == delimiter) {
                        break;
                    }
                    throw new ToonContentError(at, "unexpected content after nested field group");
                }
                if (at >= limit) {
                    break;
                }
                i = at + 1;
            }
        }
        if (levels.size() != 1) {
            throw new ToonContentError(limit, "unmatched brace in field list");
        }
        return fields;
    }

    /** First {@code target} at or after {@code from}, before {@code limit}, outside quotes; -1 if none. */
    static int findUnquoted(String text, char target, int from, int limit) {
        return findUnquoted2(text, target, target, from, limit);
    }

    /** {@link #findUnquoted} for the first of two characters. */
    static int findUnquoted2(String text, char first, char second, int from, int limit) {
        int i = from;
        while (i < limit) {
            char c = text.charAt(i);
            if (c == first || c == second) {
                return i;
            }
            if (c == '"') {
                int close = findClosingQuote(text, i, limit);
                if (close < 0) {
                    return -1;
                }
                i = close + 1;
                continue;
            }
            i++;
        }
        return -1;
    }

    static String trimSpaces(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && text.charAt(start) == ' ') {
            start++;
        }
        while (end > start && text.charAt(end - 1) == ' ') {
            end--;
        }
        return text.substring(start, end);
    }

    static int skipSpaces(String text, int from, int limit) {
        while (from < limit && text.charAt(from) == ' ') {
            from++;
        }
        return from;
    }
}
