package dev.lain.claudejb.mcp;

import static dev.lain.claudejb.mcp.ToonNumber.writeNumber;
import static dev.lain.claudejb.mcp.ToonOptions.DELIMITER;
import static dev.lain.claudejb.mcp.ToonQuote.pushKey;
import static dev.lain.claudejb.mcp.ToonQuote.pushQuoted;
import static dev.lain.claudejb.mcp.ToonQuote.pushStringValue;

import dev.lain.claudejb.mcp.ToonHeader.Column;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The encoder ({@code rust/protocol/src/toon/encode.rs}): one pass over the value, writing the
 * canonical form with the default options into one {@link StringBuilder}. Inline primitive
 * arrays, tabular arrays of uniform objects (with nested field groups), keyed tables for objects
 * of uniform objects, list items, strings quoted only when they would read back as something else.
 */
final class ToonEncoder {
    private static final int FIELD_GROUP_DEPTH_LIMIT = 32;

    private final StringBuilder out = new StringBuilder(128);
    private boolean atStart = true;

    private ToonEncoder() {
    }

    /** Encodes {@code value} with the default options (no trailing newline). */
    static String encode(Object value) {
        ToonEncoder encoder = new ToonEncoder();
        encoder.root(value);
        return encoder.out.toString();
    }

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
            pushStringValue((String) value, DELIMITER, out);
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
}
