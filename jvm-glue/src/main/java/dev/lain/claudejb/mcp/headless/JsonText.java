package dev.lain.claudejb.mcp.headless;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON for the headless host (tool results, the tasks file, the {@code mcpServers} block):
 * values are {@link Map} (insertion-ordered), {@link List}, {@link String}, {@link Number},
 * {@link Boolean} and {@code null}. The reader is strict: duplicate keys, trailing data and
 * nesting deeper than 64 are errors.
 */
public final class JsonText {
    private static final int MAX_DEPTH = 64;

    private JsonText() {
    }

    /** Compact JSON text of {@code value}. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, null, 0);
        return out.toString();
    }

    /** Indented JSON text of {@code value}, for people. */
    public static String writePretty(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, "  ", 0);
        return out.toString();
    }

    /** Parses one JSON value. */
    public static Object parse(String text) {
        Reader reader = new Reader(text);
        reader.skipWhitespace();
        Object value = reader.value(0);
        reader.skipWhitespace();
        if (reader.at < text.length()) {
            throw reader.error("unexpected data after the JSON value");
        }
        return value;
    }

    @SuppressWarnings("unchecked")
    private static void write(Object value, StringBuilder out, String indent, int level) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            quote((String) value, out);
        } else if (value instanceof Boolean) {
            out.append(value);
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
            Map<String, Object> map = (Map<String, Object>) value;
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> entry : map.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(out, indent, level + 1);
                quote(entry.getKey(), out);
                out.append(indent == null ? ":" : ": ");
                write(entry.getValue(), out, indent, level + 1);
            }
            if (!map.isEmpty()) {
                newline(out, indent, level);
            }
            out.append('}');
        } else if (value instanceof List) {
            List<Object> list = (List<Object>) value;
            out.append('[');
            boolean first = true;
            for (Object element : list) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                newline(out, indent, level + 1);
                write(element, out, indent, level + 1);
            }
            if (!list.isEmpty()) {
                newline(out, indent, level);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void newline(StringBuilder out, String indent, int level) {
        if (indent != null) {
            out.append('\n');
            for (int i = 0; i < level; i++) {
                out.append(indent);
            }
        }
    }

    private static void quote(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
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
        private int at;

        Reader(String text) {
            this.text = text;
        }

        IllegalArgumentException error(String message) {
            int line = 1;
            for (int i = 0; i < Math.min(at, text.length()); i++) {
                if (text.charAt(i) == '\n') {
                    line++;
                }
            }
            return new IllegalArgumentException(message + " (line " + line + ")");
        }

        void skipWhitespace() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        Object value(int depth) {
            if (depth > MAX_DEPTH) {
                throw error("JSON nested deeper than " + MAX_DEPTH);
            }
            char c = peek();
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
                    throw error(at >= text.length() ? "unexpected end of JSON" : "unexpected character '" + c + "'");
            }
        }

        private Object literal(String word, Object value) {
            if (!text.startsWith(word, at)) {
                throw error("expected " + word);
            }
            at += word.length();
            return value;
        }

        private Map<String, Object> object(int depth) {
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
                    throw error("expected a string key");
                }
                String key = string();
                skipWhitespace();
                expect(':');
                skipWhitespace();
                Object value = value(depth + 1);
                if (object.containsKey(key)) {
                    throw error("duplicate key \"" + key + "\"");
                }
                object.put(key, value);
                skipWhitespace();
                char c = next();
                if (c == '}') {
                    return object;
                }
                if (c != ',') {
                    throw error("expected ',' or '}'");
                }
            }
        }

        private List<Object> array(int depth) {
            List<Object> array = new ArrayList<>();
            at++;
            skipWhitespace();
            if (peek() == ']') {
                at++;
                return array;
            }
            while (true) {
                skipWhitespace();
                array.add(value(depth + 1));
                skipWhitespace();
                char c = next();
                if (c == ']') {
                    return array;
                }
                if (c != ',') {
                    throw error("expected ',' or ']'");
                }
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw error("unterminated string");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c < 0x20) {
                    throw error("control character in a string");
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
                            throw error("short \\u escape");
                        }
                        try {
                            out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        } catch (NumberFormatException e) {
                            throw error("bad \\u escape");
                        }
                        at += 4;
                        break;
                    default:
                        throw error("bad escape '\\" + escape + "'");
                }
            }
        }

        private BigDecimal number() {
            int start = at;
            if (peek() == '-') {
                at++;
            }
            if (!isDigit(peek())) {
                throw error("bad number");
            }
            if (peek() == '0') {
                at++;
            } else {
                while (isDigit(peek())) {
                    at++;
                }
            }
            if (peek() == '.') {
                at++;
                if (!isDigit(peek())) {
                    throw error("bad number");
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
                    throw error("bad number");
                }
                while (isDigit(peek())) {
                    at++;
                }
            }
            return new BigDecimal(text.substring(start, at));
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }

        private char peek() {
            return at < text.length() ? text.charAt(at) : '\0';
        }

        private char next() {
            if (at >= text.length()) {
                throw error("unexpected end of JSON");
            }
            return text.charAt(at++);
        }

        private void expect(char c) {
            if (next() != c) {
                throw error("expected '" + c + "'");
            }
        }
    }
}
