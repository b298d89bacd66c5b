package dev.lain.claudejb.mcp;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * TOON (Token-Oriented Object Notation, spec v4.4), the payload codec of the framed wire: a
 * port of the library's codec ({@code rust/protocol/src/toon/}) over the values {@link Json}
 * uses — {@link Map} (insertion-ordered), {@link List}, {@link String}, {@link BigDecimal}
 * (other {@link Number}s are accepted when encoding), {@link Boolean} and {@code null}.
 *
 * <p>The encoder writes the library's canonical form with the default options (two-space
 * indentation, comma delimiter): inline primitive arrays ({@code tags[2]: a,b}), tabular arrays
 * of uniform objects ({@code rows[2]{id,name}:} with nested field groups {@code a{b,c}}), keyed
 * tables for objects of uniform objects ({@code m[2:]{x,y}:}), list items ({@code - }), strings
 * quoted only when they would read back as something else, numbers in plain decimal.
 *
 * <p>The decoder reads every form of the spec, any delimiter a header declares, and comment
 * lines. Strict mode (the default, and the servers') checks declared counts and indentation and
 * rejects duplicate keys: a guard and a handler must never see different values for one key.
 * Non-strict mode lets the last duplicate win, as the spec says. Nesting past
 * {@link #MAX_DEPTH} is an error; decoding does not recurse, so no input exhausts the stack.
 */
final class Toon {
    /** The deepest nesting of objects and arrays accepted by the decoder. */
    static final int MAX_DEPTH = 128;

    private Toon() {
    }

    /** A TOON document could not be decoded; carries the 1-based line and column. */
    static final class DecodeException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        final int line;
        final int column;

        DecodeException(int line, int column, String message) {
            super(line + ":" + column + ": " + message);
            this.line = line;
            this.column = column;
        }
    }

    // ================================================================ encoding

    /** Encodes {@code value} with the default options (no trailing newline). */
    static String encode(Object value) {
        Encoder encoder = new Encoder();
        encoder.root(value);
        return encoder.out.toString();
    }

    /** One column of a tabular header: a leaf, the opening of a field group, or its close. */
    private static final class Column {
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

    private static final int FIELD_GROUP_DEPTH_LIMIT = 32;
    private static final char DELIMITER = ',';

    private static final class Encoder {
        final StringBuilder out = new StringBuilder(128);
        boolean atStart = true;

        void root(Object value) {
            if (value instanceof List) {
                array(null, (List<?>) value, 0);
            } else if (value instanceof Map) {
                Map<?, ?> map = (Map<?, ?>) value;
                List<Column> columns = keyedColumns(map);
                if (columns != null) {
                    beginLine(0);
                    header(null, map.size(), true, columns);
                    keyedRows(map, columns, 1);
                } else {
                    fields(map, 0);
                }
            } else if (value instanceof String && ((String) value).startsWith("\uFEFF")) {
                // A leading U+FEFF on line 1 reads as a byte-order mark and would be dropped.
                pushQuoted((String) value, out);
            } else {
                primitive(value);
            }
        }

        void beginLine(int depth) {
            if (atStart) {
                atStart = false;
            } else {
                out.append('\n');
            }
            for (int i = 0; i < depth * 2; i++) {
                out.append(' ');
            }
        }

        void primitive(Object value) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof Boolean) {
                out.append(((Boolean) value).booleanValue() ? "true" : "false");
            } else if (value instanceof Number) {
                writeNumber((Number) value, out);
            } else if (value instanceof String) {
                pushStringValue((String) value, out);
            } else {
                throw new IllegalArgumentException("TOON cannot encode a " + value.getClass().getName());
            }
        }

        void header(String key, int length, boolean keyed, List<Column> columns) {
            if (key != null) {
                pushKey(key, out);
            }
            out.append('[').append(length);
            if (keyed) {
                out.append(':');
            }
            out.append(']');
            if (columns != null) {
                out.append('{');
                boolean groupStart = true;
                for (Column column : columns) {
                    if (column == Column.CLOSE) {
                        out.append('}');
                        groupStart = false;
                        continue;
                    }
                    if (!groupStart) {
                        out.append(DELIMITER);
                    }
                    pushKey(column.name, out);
                    groupStart = column.open;
                    if (groupStart) {
                        out.append('{');
                    }
                }
                out.append('}');
            }
            out.append(':');
        }

        void inlineCells(List<?> cells) {
            boolean first = true;
            for (Object cell : cells) {
                out.append(first ? ' ' : DELIMITER);
                first = false;
                primitive(cell);
            }
        }

        void fields(Map<?, ?> map, int depth) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                field(key(entry.getKey()), entry.getValue(), depth);
            }
        }

        void field(String key, Object value, int depth) {
            if (value instanceof List) {
                array(key, (List<?>) value, depth);
            } else if (value instanceof Map) {
                Map<?, ?> map = (Map<?, ?>) value;
                List<Column> columns = keyedColumns(map);
                beginLine(depth);
                if (columns != null) {
                    header(key, map.size(), true, columns);
                    keyedRows(map, columns, depth + 1);
                    return;
                }
                pushKey(key, out);
                out.append(':');
                fields(map, depth + 1);
            } else {
                beginLine(depth);
                pushKey(key, out);
                out.append(": ");
                primitive(value);
            }
        }

        void array(String key, List<?> items, int depth) {
            beginLine(depth);
            if (items.isEmpty()) {
                if (key != null) {
                    pushKey(key, out);
                    out.append(": []");
                } else {
                    out.append("[]");
                }
                return;
            }
            Shape shape = shapeOf(items);
            if (shape == Shape.PRIMITIVES) {
                header(key, items.size(), false, null);
                inlineCells(items);
            } else if (shape == Shape.PRIMITIVE_ARRAYS) {
                header(key, items.size(), false, null);
                for (Object item : items) {
                    List<?> inner = (List<?>) item;
                    beginLine(depth + 1);
                    out.append("- ");
                    header(null, inner.size(), false, null);
                    inlineCells(inner);
                }
            } else {
                List<Column> columns = shape == Shape.OBJECTS ? tableColumns(items) : null;
                if (columns != null) {
                    header(key, items.size(), false, columns);
                    tableRows(items, columns, depth + 1);
                } else {
                    header(key, items.size(), false, null);
                    for (Object item : items) {
                        listItem(item, depth + 1);
                    }
                }
            }
        }

        void listItem(Object value, int depth) {
            if (value instanceof List) {
                List<?> inner = (List<?>) value;
                beginLine(depth);
                out.append("- ");
                header(null, inner.size(), false, null);
                if (allPrimitive(inner)) {
                    inlineCells(inner);
                } else {
                    for (Object item : inner) {
                        listItem(item, depth + 1);
                    }
                }
            } else if (value instanceof Map) {
                objectListItem((Map<?, ?>) value, depth);
            } else {
                beginLine(depth);
                out.append("- ");
                primitive(value);
            }
        }

        void objectListItem(Map<?, ?> map, int depth) {
            beginLine(depth);
            Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
            if (!entries.hasNext()) {
                out.append('-');
                return;
            }
            out.append("- ");
            Map.Entry<?, ?> first = entries.next();
            String firstKey = key(first.getKey());
            Object firstValue = first.getValue();
            int restDepth = depth + 1;
            if (firstValue instanceof List && ((List<?>) firstValue).isEmpty()) {
                pushKey(firstKey, out);
                out.append(": []");
            } else if (firstValue instanceof List) {
                List<?> items = (List<?>) firstValue;
                Shape shape = shapeOf(items);
                if (shape == Shape.PRIMITIVES) {
                    header(firstKey, items.size(), false, null);
                    inlineCells(items);
                } else {
                    List<Column> columns = shape == Shape.OBJECTS ? tableColumns(items) : null;
                    if (columns != null) {
                        header(firstKey, items.size(), false, columns);
                        tableRows(items, columns, depth + 2);
                    } else {
                        header(firstKey, items.size(), false, null);
                        for (Object item : items) {
                            listItem(item, depth + 2);
                        }
                    }
                }
            } else if (firstValue instanceof Map) {
                Map<?, ?> firstMap = (Map<?, ?>) firstValue;
                List<Column> columns = keyedColumns(firstMap);
                if (columns != null) {
                    header(firstKey, firstMap.size(), true, columns);
                    keyedRows(firstMap, columns, depth + 2);
                } else {
                    pushKey(firstKey, out);
                    out.append(':');
                    fields(firstMap, depth + 2);
                }
            } else {
                pushKey(firstKey, out);
                out.append(": ");
                primitive(firstValue);
            }
            while (entries.hasNext()) {
                Map.Entry<?, ?> entry = entries.next();
                field(key(entry.getKey()), entry.getValue(), restDepth);
            }
        }

        void tableRows(List<?> rows, List<Column> columns, int depth) {
            for (Object row : rows) {
                beginLine(depth);
                cells((Map<?, ?>) row, columns);
            }
        }

        void keyedRows(Map<?, ?> map, List<Column> columns, int depth) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                beginLine(depth);
                pushKey(key(entry.getKey()), out);
                out.append(": ");
                cells((Map<?, ?>) entry.getValue(), columns);
            }
        }

        void cells(Map<?, ?> row, List<Column> columns) {
            List<Map<?, ?>> groups = new ArrayList<>();
            groups.add(row);
            boolean first = true;
            for (Column column : columns) {
                Map<?, ?> current = groups.get(groups.size() - 1);
                if (column == Column.CLOSE) {
                    groups.remove(groups.size() - 1);
                } else if (column.open) {
                    Object inner = current.get(column.name);
                    groups.add(inner instanceof Map ? (Map<?, ?>) inner : current);
                } else {
                    if (!first) {
                        out.append(DELIMITER);
                    }
                    first = false;
                    if (current.containsKey(column.name)) {
                        primitive(current.get(column.name));
                    }
                }
            }
        }
    }

    private static String key(Object key) {
        if (!(key instanceof String)) {
            throw new IllegalArgumentException("TOON object keys must be strings, not " + key);
        }
        return (String) key;
    }

    private static boolean isPrimitive(Object value) {
        return !(value instanceof List) && !(value instanceof Map);
    }

    private static boolean allPrimitive(List<?> items) {
        for (Object item : items) {
            if (!isPrimitive(item)) {
                return false;
            }
        }
        return true;
    }

    private enum Shape { PRIMITIVES, PRIMITIVE_ARRAYS, OBJECTS, MIXED }

    private static Shape shapeOf(List<?> items) {
        boolean primitives = true;
        boolean objects = true;
        boolean primitiveArrays = true;
        for (Object item : items) {
            if (item instanceof Map) {
                primitives = false;
                primitiveArrays = false;
            } else if (item instanceof List) {
                primitives = false;
                objects = false;
                if (primitiveArrays && !allPrimitive((List<?>) item)) {
                    primitiveArrays = false;
                }
            } else {
                objects = false;
                primitiveArrays = false;
            }
            if (!primitives && !objects && !primitiveArrays) {
                return Shape.MIXED;
            }
        }
        if (primitives) {
            return Shape.PRIMITIVES;
        }
        if (objects) {
            return Shape.OBJECTS;
        }
        return primitiveArrays ? Shape.PRIMITIVE_ARRAYS : Shape.MIXED;
    }

    /** The field list of an array of uniform objects, or {@code null} for list form. */
    private static List<Column> tableColumns(List<?> rows) {
        List<Map<?, ?>> maps = new ArrayList<>(rows.size());
        for (Object row : rows) {
            if (!(row instanceof Map)) {
                return null;
            }
            maps.add((Map<?, ?>) row);
        }
        List<Column> columns = new ArrayList<>();
        return classify(maps, 0, columns) ? columns : null;
    }

    /** The field list of an object whose 2+ values are uniform non-empty objects, or {@code null}. */
    private static List<Column> keyedColumns(Map<?, ?> map) {
        if (map.size() < 2) {
            return null;
        }
        List<Map<?, ?>> maps = new ArrayList<>(map.size());
        for (Object value : map.values()) {
            if (!(value instanceof Map) || ((Map<?, ?>) value).isEmpty()) {
                return null;
            }
            maps.add((Map<?, ?>) value);
        }
        List<Column> columns = new ArrayList<>();
        return classify(maps, 0, columns) ? columns : null;
    }

    private static boolean classify(List<Map<?, ?>> objects, int depth, List<Column> columns) {
        if (objects.isEmpty()) {
            return false;
        }
        Map<?, ?> first = objects.get(0);
        int width = first.size();
        if (width == 0) {
            return false;
        }
        List<String> keys = new ArrayList<>(width);
        for (Object key : first.keySet()) {
            keys.add(key(key));
        }
        boolean[] allPrimitive = new boolean[width];
        boolean[] allObjects = new boolean[width];
        java.util.Arrays.fill(allPrimitive, true);
        java.util.Arrays.fill(allObjects, true);
        for (Map<?, ?> object : objects) {
            if (object.size() != width) {
                return false;
            }
            for (int index = 0; index < width; index++) {
                String key = keys.get(index);
                if (!object.containsKey(key)) {
                    return false;
                }
                Object value = object.get(key);
                allPrimitive[index] &= isPrimitive(value);
                allObjects[index] &= value instanceof Map && !((Map<?, ?>) value).isEmpty();
            }
        }
        for (int index = 0; index < width; index++) {
            String key = keys.get(index);
            if (allPrimitive[index]) {
                columns.add(new Column(key, false));
                continue;
            }
            if (!allObjects[index] || depth + 1 >= FIELD_GROUP_DEPTH_LIMIT) {
                return false;
            }
            List<Map<?, ?>> nested = new ArrayList<>(objects.size());
            for (Map<?, ?> object : objects) {
                nested.add((Map<?, ?>) object.get(key));
            }
            columns.add(new Column(key, true));
            if (!classify(nested, depth + 1, columns)) {
                return false;
            }
            columns.add(Column.CLOSE);
        }
        return true;
    }

    /** Numbers in plain decimal: no exponent, no trailing zeros, {@code -0} as {@code 0}. */
    static void writeNumber(Number number, StringBuilder out) {
        BigDecimal decimal;
        if (number instanceof BigDecimal) {
            decimal = (BigDecimal) number;
        } else if (number instanceof BigInteger) {
            decimal = new BigDecimal((BigInteger) number);
        } else if (number instanceof Double || number instanceof Float) {
            double value = number.doubleValue();
            if (Double.isNaN(value) || Double.isInfinite(value)) {
                out.append("null");
                return;
            }
            decimal = new BigDecimal(Double.toString(value));
        } else {
            decimal = BigDecimal.valueOf(number.longValue());
        }
        if (decimal.signum() == 0) {
            out.append('0');
        } else {
            out.append(decimal.stripTrailingZeros().toPlainString());
        }
    }

    static boolean keyIsBare(String key) {
        if (key.isEmpty()) {
            return false;
        }
        char first = key.charAt(0);
        if (!(isAsciiLetter(first) || first == '_')) {
            return false;
        }
        for (int i = 1; i < key.length(); i++) {
            char c = key.charAt(i);
            if (!(isAsciiLetter(c) || isAsciiDigit(c) || c == '_' || c == '.')) {
                return false;
            }
        }
        return true;
    }

    private static boolean isAsciiLetter(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    private static boolean isAsciiDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static void pushKey(String key, StringBuilder out) {
        if (keyIsBare(key)) {
            out.append(key);
        } else {
            pushQuoted(key, out);
        }
    }

    private static void pushStringValue(String text, StringBuilder out) {
        if (valueNeedsQuotes(text, DELIMITER)) {
            pushQuoted(text, out);
        } else {
            out.append(text);
        }
    }

    /** Whether a string value must be quoted to decode back as the same string. */
    static boolean valueNeedsQuotes(String text, char delimiter) {
        if (text.isEmpty()) {
            return true;
        }
        char first = text.charAt(0);
        char last = text.charAt(text.length() - 1);
        if (first == ' ' || first == '\t' || first == '-' || first == '#' || last == ' ' || last == '\t') {
            return true;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c == ':' || c == '"' || c == '\\' || c == '[' || c == ']' || c == '{' || c == '}'
                    || c == delimiter) {
                return true;
            }
        }
        if (text.equals("true") || text.equals("false") || text.equals("null")) {
            return true;
        }
        return (isAsciiDigit(first) || first == '+') && isNumericLike(text);
    }

    static void pushQuoted(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '\\': out.append("\\\\"); break;
                case '"': out.append("\\\""); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append("\\u00").append(Character.forDigit(c >> 4, 16)).append(Character.forDigit(c & 0xf, 16));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    // ================================================================ numbers

    /** [end, integralDigits, hasFractionOrExponent], or null when no number starts at {@code start}. */
    private static int[] scanNumberShape(String text, int start) {
        int i = start;
        int n = text.length();
        while (i < n && isAsciiDigit(text.charAt(i))) {
            i++;
        }
        int integralDigits = i - start;
        if (integralDigits == 0) {
            return null;
        }
        int fractionOrExponent = 0;
        if (i < n && text.charAt(i) == '.') {
            int fractionStart = ++i;
            while (i < n && isAsciiDigit(text.charAt(i))) {
                i++;
            }
            if (i == fractionStart) {
                return null;
            }
            fractionOrExponent = 1;
        }
        if (i < n && (text.charAt(i) == 'e' || text.charAt(i) == 'E')) {
            i++;
            if (i < n && (text.charAt(i) == '+' || text.charAt(i) == '-')) {
                i++;
            }
            int exponentStart = i;
            while (i < n && isAsciiDigit(text.charAt(i))) {
                i++;
            }
            if (i == exponentStart) {
                return null;
            }
            fractionOrExponent = 1;
        }
        return new int[] {i, integralDigits, fractionOrExponent};
    }

    private static boolean isNumericLike(String text) {
        int start = !text.isEmpty() && (text.charAt(0) == '+' || text.charAt(0) == '-') ? 1 : 0;
        int[] shape = scanNumberShape(text, start);
        return shape != null && shape[0] == text.length();
    }

    /** A number token as a {@link BigDecimal}; {@code null} when it is not one (then it is a string). */
    static BigDecimal decodeNumber(String token) {
        boolean negative = token.startsWith("-");
        int start = negative ? 1 : 0;
        int[] shape = scanNumberShape(token, start);
        if (shape == null || shape[0] != token.length()) {
            return null;
        }
        if (shape[1] > 1 && token.charAt(start) == '0') {
            return null; // leading zeros: a string such as "05"
        }
        BigDecimal value;
        try {
            value = new BigDecimal(token);
        } catch (NumberFormatException | ArithmeticException e) {
            return null;
        }
        if (shape[2] == 1 && Double.isInfinite(value.doubleValue())) {
            return null; // beyond any float, like 1e400: kept as the string it is
        }
        return value.signum() == 0 ? BigDecimal.ZERO : value;
    }

    // ================================================================ decoding

    /** Decodes a document in strict mode with two-space indentation. */
    static Object decode(String text) {
        return decode(text, 2, true);
    }

    static Object decode(String text, int indent, boolean strict) {
        if (indent < 1) {
            throw new DecodeException(1, 1, "indent must be at least 1");
        }
        return new Parser(text, indent, strict).document();
    }

    private static final class Line {
        final int number;
        final int start;
        final int content;
        final int end;
        final int depth;

        Line(int number, int start, int content, int end, int depth) {
            this.number = number;
            this.start = start;
            this.content = content;
            this.end = end;
            this.depth = depth;
        }
    }

    /** The structural lines of a document: comments and blank lines skipped (blank ones remembered). */
    private static final class Lines {
        final String text;
        final int indent;
        final boolean strict;
        int nextStart;
        int number;
        Line peeked;
        final List<Integer> blankLines = new ArrayList<>();
        int lastConsumed;

        Lines(String text, int indent, boolean strict) {
            this.text = text;
            this.indent = indent;
            this.strict = strict;
            this.nextStart = text.startsWith("\uFEFF") ? 1 : 0;
        }

        int remaining() {
            return nextStart < 0 ? 0 : Math.max(0, text.length() - nextStart);
        }

        Line peek() {
            if (peeked == null) {
                peeked = scan();
            }
            return peeked;
        }

        Line next() {
            Line line = peeked != null ? peeked : scan();
            peeked = null;
            if (line != null) {
                lastConsumed = line.number;
            }
            return line;
        }

        private Line scan() {
            while (nextStart >= 0) {
                int start = nextStart;
                int newline = text.indexOf('\n', start);
                int rawEnd = newline < 0 ? text.length() : newline;
                nextStart = newline < 0 ? -1 : newline + 1;
                number++;
                int end = rawEnd;
                if (end > start && text.charAt(end - 1) == '\r') {
                    end--;
                }
                int lead = start;
                int firstTab = -1;
                while (lead < end && (text.charAt(lead) == ' ' || text.charAt(lead) == '\t')) {
                    if (text.charAt(lead) == '\t' && firstTab < 0) {
                        firstTab = lead;
                    }
                    lead++;
                }
                int content = firstTab >= 0 && strict ? firstTab : lead;
                while (end > content && text.charAt(end - 1) == ' ') {
                    end--;
                }
                if (firstTab < 0 && end > content && text.charAt(content) == '#') {
                    continue; // a comment: only spaces may precede its '#'
                }
                if (end == content) {
                    blankLines.add(number);
                    continue;
                }
                int depth;
                if (firstTab >= 0) {
                    if (strict) {
                        throw new DecodeException(number, firstTab - start + 1,
                                "tabs are not allowed in indentation in strict mode");
                    }
                    int tabs = 0;
                    for (int i = start; i < lead; i++) {
                        if (text.charAt(i) == '\t') {
                            tabs++;
                        }
                    }
                    depth = (lead - start - tabs) / indent + tabs;
                } else {
                    int spaces = content - start;
                    if (strict && spaces % indent != 0) {
                        throw new DecodeException(number, 1,
                                "indentation must be a multiple of " + indent + " spaces, found " + spaces);
                    }
                    depth = spaces / indent;
                }
                return new Line(number, start, content, end, depth);
            }
            return null;
        }
    }

    /** Thrown by the header scanner with an offset into the scanned content. */
    private static final class ContentError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int at;

        ContentError(int at, String message) {
            super(message, null, false, false);
            this.at = at;
        }
    }

    /** Index of the quote closing the one at {@code open}, or -1. */
    private static int findClosingQuote(String text, int open, int limit) {
        int i = open + 1;
        while (i < limit) {
            char c = text.charAt(i);
            if (c == '"') {
                return i;
            }
            if (c == '\\') {
                i += 2;
                continue;
            }
            i++;
        }
        return -1;
    }

    /** First {@code target} at or after {@code from}, before {@code limit}, outside quotes; -1 if none. */
    private static int findUnquoted(String text, char target, int from, int limit) {
        int i = from;
        while (i < limit) {
            char c = text.charAt(i);
            if (c == target) {
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

    private static int findUnquoted2(String text, char first, char second, int from, int limit) {
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

    private static String trimSpaces(String text) {
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

    private static int skipSpaces(String text, int from, int limit) {
        while (from < limit && text.charAt(from) == ' ') {
            from++;
        }
        return from;
    }

    /** The quoted string opening at {@code open}: [value, index after the closing quote]. */
    private static Object[] decodeQuoted(String text, int open, int limit) {
        StringBuilder out = new StringBuilder();
        int i = open + 1;
        while (true) {
            if (i >= limit) {
                throw new ContentError(open, "unterminated string: missing closing quote");
            }
            char c = text.charAt(i);
            if (c == '"') {
                return new Object[] {out.toString(), i + 1};
            }
            if (c != '\\') {
                out.append(c);
                i++;
                continue;
            }
            if (i + 1 >= limit) {
                throw new ContentError(open, "unterminated string: missing closing quote");
            }
            char escaped = text.charAt(i + 1);
            int at = i;
            i += 2;
            switch (escaped) {
                case '\\': out.append('\\'); break;
                case '"': out.append('"'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': {
                    if (i + 4 > limit) {
                        throw new ContentError(at, "invalid escape: \\u needs exactly four hex digits");
                    }
                    int code = 0;
                    for (int k = 0; k < 4; k++) {
                        int digit = Character.digit(text.charAt(i + k), 16);
                        if (digit < 0) {
                            throw new ContentError(at, "invalid escape: \\u needs exactly four hex digits");
                        }
                        code = code * 16 + digit;
                    }
                    if (code >= 0xD800 && code <= 0xDFFF) {
                        throw new ContentError(at, "invalid escape: \\u escapes may not encode surrogates");
                    }
                    out.append((char) code);
                    i += 4;
                    break;
                }
                default:
                    throw new ContentError(at, "invalid escape: only \\\\ \\\" \\n \\r \\t and \\uXXXX are allowed");
            }
        }
    }

    /** A header's field list flattened: leaves are names, groups open with {@code "{name"} markers. */
    private static final class Fields {
        final List<Column> ops = new ArrayList<>();
        int leafCount;
        int groupDepth;
    }

    private static final class Header {
        String key;
        long length;
        char delimiter = ',';
        boolean keyed;
        Fields fields;
        int inlineStart = -1;
    }

    /**
     * Parses {@code text[from, limit)} as an array header; {@code null} when the line is not one
     * (no bracket before the first colon). A line that starts to be a header but breaks its
     * grammar is an error in both modes.
     */
    private static Header parseHeader(String text, int from, int limit, int maxGroupDepth, boolean strict) {
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
            throw new ContentError(bracketStart, "unterminated bracket segment");
        }
        int braceEnd = bracketEnd + 1;
        int braceStart = findUnquoted(text, '{', bracketEnd, limit);
        if (braceStart >= 0) {
            int colonAfter = findUnquoted(text, ':', bracketEnd, limit);
            if (colonAfter >= 0 && braceStart < colonAfter) {
                if (braceStart != bracketEnd + 1) {
                    throw new ContentError(bracketEnd + 1, "unexpected text between bracket segment and field list");
                }
                int close = findMatchingBrace(text, braceStart, limit);
                if (close >= 0) {
                    braceEnd = close + 1;
                }
            }
        }
        int colon = findUnquoted(text, ':', Math.max(bracketEnd, braceEnd), limit);
        if (colon < 0) {
            throw new ContentError(bracketEnd, "missing colon after array header");
        }
        int gapStart = Math.max(bracketEnd + 1, braceEnd);
        if (colon != gapStart) {
            throw new ContentError(gapStart, "unexpected text between array header and colon");
        }
        Header header = new Header();
        if (bracketStart > from) {
            char before = text.charAt(bracketStart - 1);
            if (before == ' ' || before == '\t') {
                throw new ContentError(bracketStart, "unexpected whitespace between key and bracket segment");
            }
            header.key = parseName(text, from, bracketStart);
        }
        parseBracketSegment(text.substring(bracketStart + 1, bracketEnd), bracketStart + 1, header);
        if (braceStart >= 0 && braceStart < colon) {
            int close = findMatchingBrace(text, braceStart, limit);
            if (close >= 0 && close < colon) {
                for (char other : new char[] {',', '\t', '|'}) {
                    if (other != header.delimiter) {
                        int at = findUnquoted(text, other, braceStart + 1, close);
                        if (at >= 0) {
                            throw new ContentError(at, "header delimiter mismatch: bracket declares \""
                                    + display(header.delimiter) + "\" but the field list uses \"" + display(other) + "\"");
                        }
                    }
                }
                header.fields = parseFields(text, braceStart + 1, close, header.delimiter, maxGroupDepth, strict);
            }
        }
        if (header.keyed && header.fields == null) {
            throw new ContentError(bracketStart, "a keyed header needs a field list");
        }
        int valueStart = skipSpaces(text, colon + 1, limit);
        if (valueStart < limit) {
            if (header.fields != null) {
                throw new ContentError(valueStart, "unexpected values after a header with a field list");
            }
            header.inlineStart = valueStart;
        }
        return header;
    }

    private static String display(char delimiter) {
        return delimiter == '\t' ? "\\t" : String.valueOf(delimiter);
    }

    private static void parseBracketSegment(String segment, int at, Header header) {
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
            throw new ContentError(at, "invalid array length \"" + segment
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
                throw new ContentError(after, "unexpected characters after closing quote");
            }
            return (String) quoted[0];
        }
        return text.substring(start, end);
    }

    private static Fields parseFields(String text, int from, int limit, char delimiter, int maxGroupDepth,
                                      boolean strict) {
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
                        throw new ContentError(entryStart, "unterminated quoted field name");
                    }
                }
                stop++;
            }
            int terminator = stop < limit ? text.charAt(stop) : -1;
            if (trimSpaces(text.substring(entryStart, stop)).isEmpty()) {
                throw new ContentError(entryStart, terminator == '{'
                        ? "missing field name before nested field group" : "empty field name in field list");
            }
            if (terminator == '{' && (text.charAt(stop - 1) == ' ' || text.charAt(stop - 1) == '\t')) {
                throw new ContentError(stop, "unexpected whitespace before nested field group");
            }
            String name = parseName(text, entryStart, stop);
            if (!levels.get(levels.size() - 1).add(name) && strict) {
                throw new ContentError(entryStart, "duplicate field name \"" + name + "\" in field list");
            }
            i = stop + 1;
            if (terminator == '{') {
                fields.ops.add(new Column(name, true));
                levels.add(new HashSet<>());
                fields.groupDepth = Math.max(fields.groupDepth, levels.size() - 1);
                if (levels.size() - 1 > maxGroupDepth) {
                    throw new ContentError(stop, "field groups nested deeper than the nesting limit");
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
                        throw new ContentError(at, "unmatched brace in field list");
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
                    throw new ContentError(at, "unexpected content after nested field group");
                }
                if (at >= limit) {
                    break;
                }
                i = at + 1;
            }
        }
        if (levels.size() != 1) {
            throw new ContentError(limit, "unmatched brace in field list");
        }
        return fields;
    }

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

    private static final class Parser {
        final String text;
        final Lines lines;
        final boolean strict;
        final List<Frame> frames = new ArrayList<>();
        Object result;
        boolean hasResult;

        Parser(String text, int indent, boolean strict) {
            this.text = text;
            this.lines = new Lines(text, indent, strict);
            this.strict = strict;
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

        Header headerAt(Line line, int offset) {
            try {
                return parseHeader(text, offset, line.end, Math.max(0, MAX_DEPTH - frames.size()), strict);
            } catch (ContentError e) {
                throw errorAt(line, e.at, e.getMessage());
            }
        }

        Object document() {
            try {
                return documentUnchecked();
            } catch (ContentError e) {
                throw new DecodeException(1, 1, e.getMessage());
            }
        }

        private Object documentUnchecked() {
            Line first = lines.peek();
            if (first == null) {
                return new LinkedHashMap<String, Object>();
            }
            if (first.depth != 0) {
                throw overIndented(first, 0);
            }
            String content = content(first);
            if (content.equals("[]")) {
                lines.next();
                checkNesting(first, 1);
                return finishRoot(new ArrayList<>());
            }
            if (content.startsWith("[")) {
                Header header = headerAt(first, first.content);
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
                    top.items.add(value);
                }
            } else {
                insert(slot.key, value, slot.line, slot.offset);
            }
        }

        void insert(String key, Object value, Line line, int offset) {
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
            frames.add(frame);
        }

        DecodeException countError(Line line, long declared, int found, String what) {
            return errorLine(line, "expected " + declared + " " + what + ", found " + found);
        }

        void checkNoBlankLines(int first, int last, String what) {
            if (first < 0 || !strict) {
                return;
            }
            for (int blank : lines.blankLines) {
                if (blank > first) {
                    if (blank < last) {
                        throw new DecodeException(blank, 1, "blank lines are not allowed inside " + what + " in strict mode");
                    }
                    return;
                }
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
            Header header = headerAt(line, from);
            if (header != null) {
                headerField(header, line, from, depth);
            } else {
                plainField(line, from, depth, -1);
            }
        }

        void headerField(Header header, Line line, int from, int depth) {
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
                } catch (ContentError e) {
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
                insert(key, new LinkedHashMap<String, Object>(), line, from);
                return;
            }
            Object value;
            if (text.substring(valueStart, line.end).equals("[]")) {
                checkNesting(line, 1);
                value = new ArrayList<>();
            } else {
                value = primitive(line, valueStart, line.end);
            }
            insert(key, value, line, from);
        }

        void listItem(Line line, int itemDepth) {
            String content = content(line);
            if (content.equals("-")) {
                checkNesting(line, 1);
                deliver(new LinkedHashMap<String, Object>(), Slot.PUSH);
                return;
            }
            int from = skipSpaces(text, line.content + 1, line.end);
            String after = text.substring(from, line.end);
            if (after.equals("[]")) {
                checkNesting(line, 1);
                deliver(new ArrayList<>(), Slot.PUSH);
                return;
            }
            if (after.indexOf('[') >= 0 && after.indexOf(':') >= 0) {
                Header header = headerAt(line, from);
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
        Object[] arrayFromHeader(Header header, Line line, int baseDepth, Slot slot) {
            checkNesting(line, header.fields != null ? 2 + header.fields.groupDepth : 1);
            if (header.keyed) {
                return new Object[] {keyedTable(header, line, baseDepth)};
            }
            if (header.inlineStart >= 0) {
                List<Object> values = new ArrayList<>();
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

        List<Object> table(Header header, Line line, int baseDepth) {
            int rowDepth = contentDepth(baseDepth);
            List<Object> rows = new ArrayList<>();
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

        Map<String, Object> keyedTable(Header header, Line line, int baseDepth) {
            int entryDepth = contentDepth(baseDepth);
            Map<String, Object> map = new LinkedHashMap<>();
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
                    } catch (ContentError e) {
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
            List<Object> cells = new ArrayList<>(fields.leafCount);
            int trimmedFrom = skipSpaces(text, from, line.end);
            if (trimmedFrom < line.end) {
                splitCells(line, trimmedFrom, line.end, delimiter, cells);
            }
            if (cells.size() != fields.leafCount) {
                throw countError(line, fields.leafCount, cells.size(), "cells in the row");
            }
            // Leaves take cells in order; groups become nested objects.
            List<Map<String, Object>> open = new ArrayList<>();
            List<String> openNames = new ArrayList<>();
            Map<String, Object> current = new LinkedHashMap<>();
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
            String token = text.substring(tokenStart, tokenEnd);
            if (first == '"') {
                Object[] quoted;
                try {
                    quoted = decodeQuoted(text, tokenStart, tokenEnd);
                } catch (ContentError e) {
                    throw errorAt(line, e.at, e.getMessage());
                }
                if ((Integer) quoted[1] != tokenEnd) {
                    throw errorAt(line, (Integer) quoted[1], "unexpected characters after closing quote");
                }
                return quoted[0];
            }
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
                return number != null ? number : token;
            }
            return token;
        }
    }
}
