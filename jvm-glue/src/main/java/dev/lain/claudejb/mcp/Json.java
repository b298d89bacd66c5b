package dev.lain.claudejb.mcp;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader and writer, so this package (and a plugin that only needs to
 * read a tool's arguments and write its result) needs no dependency.
 *
 * <p>Values map to {@link Map} (insertion-ordered), {@link List}, {@link String},
 * {@link BigDecimal}, {@link Boolean} and {@code null}. The reader rejects duplicate keys (a
 * guard and a handler must never see different arguments), trailing data, nesting deeper
 * than {@link #MAX_DEPTH}, and text whose value would take more than {@code 16 × its length
 * + 1 MiB} bytes of heap: what the value takes is counted while it is built, so a dense
 * document (a long array of one-digit numbers) is refused before it exists.
 */
public final class Json {
    /** The deepest nesting {@link #parse} accepts. */
    public static final int MAX_DEPTH = 128;

    private Json() {
    }

    /** Thrown for text that is not one valid JSON value. */
    public static final class ParseException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        ParseException(String message, int at) {
            super(message + " at offset " + at);
        }
    }

    /**
     * Parses one JSON value; {@link ParseException} for anything else, and for a value that would
     * take more than {@code 16 × text.length() + 1 MiB} bytes.
     */
    public static Object parse(String text) {
        return parse(text, DecodeBudget.defaultFor(text.length()));
    }

    /** {@link #parse(String)} within {@code maxDecodedBytes} ({@link DecodeBudget#UNLIMITED}: none). */
    static Object parse(String text, long maxDecodedBytes) {
        Reader reader = new Reader(text, new DecodeBudget(maxDecodedBytes, text.length()));
        reader.skipWhitespace();
        Object value = reader.value(0);
        reader.skipWhitespace();
        if (reader.at < text.length()) {
            throw new ParseException("unexpected data after the JSON value", reader.at);
        }
        return value;
    }

    /** Compact JSON text of {@code value} (maps, lists, strings, numbers, booleans, null). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    /** Indented JSON text of {@code value}, for people. */
    public static String writePretty(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, "  ", 0);
        return out.toString();
    }

    /** {@code text} as a JSON string literal. */
    public static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2);
        writeString(text, out);
        return out.toString();
    }

    static void write(Object value, StringBuilder out) {
        write(value, out, null, 0);
    }

    /** Writes {@code value}; with an {@code indent}, one member or element a line. */
    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out, String indent, int level) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            writeString((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(value.toString());
        } else if (value instanceof BigDecimal) {
            out.append(((BigDecimal) value).toString());
        } else if (value instanceof Double || value instanceof Float) {
            double number = ((Number) value).doubleValue();
            if (Double.isNaN(number) || Double.isInfinite(number)) {
                throw new IllegalArgumentException("JSON has no " + number);
            }
            out.append(BigDecimal.valueOf(number).toString());
        } else if (value instanceof Number) {
            out.append(((Number) value).longValue());
        } else if (value instanceof Map) {
            Map<String, Object> members = (Map<String, Object>) value;
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> entry : members.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newLine(out, indent, level + 1);
                writeString(entry.getKey(), out);
                out.append(indent == null ? ":" : ": ");
                write(entry.getValue(), out, indent, level + 1);
            }
            if (!members.isEmpty()) {
                newLine(out, indent, level);
            }
            out.append('}');
        } else if (value instanceof List) {
            List<Object> elements = (List<Object>) value;
            out.append('[');
            boolean first = true;
            for (Object element : elements) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newLine(out, indent, level + 1);
                write(element, out, indent, level + 1);
            }
            if (!elements.isEmpty()) {
                newLine(out, indent, level);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void newLine(StringBuilder out, String indent, int level) {
        if (indent != null) {
            out.append('\n');
            for (int i = 0; i < level; i++) {
                out.append(indent);
            }
        }
    }

    private static void writeString(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    // Control characters (NUL included) and U+2028/2029 are escaped; everything
                    // else, supplementary characters too, is written as itself.
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static final class Reader {
        private final String text;
        private final DecodeBudget budget;
        private int at;

        Reader(String text, DecodeBudget budget) {
            this.text = text;
            this.budget = budget;
        }

        /** Takes {@code bytes} from the budget, or fails once it is spent. */
        private void charge(long bytes) {
            if (!budget.take(bytes)) {
                throw new ParseException(budget.message(), at);
            }
        }

        void skipWhitespace() {
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
                    at++;
                } else {
                    break;
                }
            }
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw new ParseException("JSON nested deeper than " + MAX_DEPTH, at);
            }
            if (at >= text.length()) {
                throw new ParseException("unexpected end of JSON", at);
            }
            char c = text.charAt(at);
            switch (c) {
                case '{': return object(depth);
                case '[': return array(depth);
                case '"': return string();
                case 't': return literal("true", Boolean.TRUE);
                case 'f': return literal("false", Boolean.FALSE);
                case 'n': return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw new ParseException("unexpected character '" + c + "'", at);
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw new ParseException("expected " + word, at);
            }
            at += word.length();
            return value;
        }

        private Map<String, Object> object(int depth) {
            charge(DecodeBudget.CONTAINER_BYTES);
            Map<String, Object> object = new LinkedHashMap<>();
            at++;
            skipWhitespace();
            if (peek() == '}') {
                at++;
                return object;
            }
            while (true) {
                skipWhitespace();
                if (peek() != '"') {
                    throw new ParseException("expected a string key", at);
                }
                int keyAt = at;
                String key = string();
                skipWhitespace();
                expect(':');
                skipWhitespace();
                Object value = value(depth + 1);
                if (object.containsKey(key)) {
                    throw new ParseException("duplicate key \"" + key + "\"", keyAt);
                }
                charge(DecodeBudget.ENTRY_BYTES);
                object.put(key, value);
                skipWhitespace();
                char c = next();
                if (c == '}') {
                    return object;
                }
                if (c != ',') {
                    throw new ParseException("expected ',' or '}'", at - 1);
                }
            }
        }

        private List<Object> array(int depth) {
            charge(DecodeBudget.CONTAINER_BYTES);
            List<Object> array = new ArrayList<>();
            at++;
            skipWhitespace();
            if (peek() == ']') {
                at++;
                return array;
            }
            while (true) {
                skipWhitespace();
                charge(DecodeBudget.ELEMENT_BYTES);
                array.add(value(depth + 1));
                skipWhitespace();
                char c = next();
                if (c == ']') {
                    return array;
                }
                if (c != ',') {
                    throw new ParseException("expected ',' or ']'", at - 1);
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw new ParseException("unterminated string", at);
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    charge(DecodeBudget.string(out.length()));
                    return out.toString();
                }
                if (c < 0x20) {
                    throw new ParseException("control character in a string", at - 1);
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char escape = next();
                switch (escape) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        if (at + 4 > text.length()) {
                            throw new ParseException("short \\u escape", at);
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException e) {
                            throw new ParseException("bad \\u escape", at);
                        }
                        at += 4;
                        break;
                    default:
                        throw new ParseException("bad escape '\\" + escape + "'", at - 1);
                }
            }
        }

        private BigDecimal number() {
            int start = at;
            if (peek() == '-') {
                at++;
            }
            if (peek() == '0') {
                at++;
            } else if (isDigit(peek())) {
                while (isDigit(peek())) {
                    at++;
                }
            } else {
                throw new ParseException("bad number", start);
            }
            if (peek() == '.') {
                at++;
                if (!isDigit(peek())) {
                    throw new ParseException("bad number", start);
                }
                while (isDigit(peek())) {
                    at++;
                }
            }
            if (peek() == 'e' || peek() == 'E') {
                at++;
                if (peek() == '+' || peek() == '-') {
                    at++;
                }
                if (!isDigit(peek())) {
                    throw new ParseException("bad number", start);
                }
                while (isDigit(peek())) {
                    at++;
                }
            }
            String token = text.substring(start, at);
            charge(DecodeBudget.number(token));
            return new BigDecimal(token);
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private char peek() {
            return at < text.length() ? text.charAt(at) : '\0';
        }

        private char next() {
            if (at >= text.length()) {
                throw new ParseException("unexpected end of JSON", at);
            }
            return text.charAt(at++);
        }

        private void expect(char c) {
            if (next() != c) {
                throw new ParseException("expected '" + c + "'", at - 1);
            }
        }
    }
}
