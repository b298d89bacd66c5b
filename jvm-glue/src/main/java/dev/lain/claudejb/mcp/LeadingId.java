package dev.lain.claudejb.mcp;

import java.nio.charset.StandardCharsets;

/**
 * The {@code id} of a JSON-RPC message read from its first bytes only, for a message too long to
 * parse: the top-level members are scanned in order, skipping each value, until {@code "id"};
 * its value (a number or a string) comes back as JSON text. Null when the bytes end first, the
 * message does not start as an object, or anything looks wrong — never a guess.
 */
final class LeadingId {
    private final byte[] bytes;
    private int at;

    private LeadingId(byte[] bytes) {
        this.bytes = bytes;
    }

    /** The id's JSON text ({@code 7}, {@code "abc"}), or null. */
    static String find(byte[] prefix) {
        try {
            return new LeadingId(prefix).scan();
        } catch (IndexOutOfBoundsException | IllegalStateException e) {
            return null;
        }
    }

    private String scan() {
        expect('{');
        while (true) {
            space();
            int keyStart = at;
            skipString();
            String key = new String(bytes, keyStart, at - keyStart, StandardCharsets.UTF_8);
            space();
            expect(':');
            space();
            int valueStart = at;
            skipValue(0);
            if (key.equals("\"id\"")) {
                String value = new String(bytes, valueStart, at - valueStart, StandardCharsets.UTF_8);
                Object parsed = Json.parse(value);
                if (!(parsed instanceof String) && !(parsed instanceof java.math.BigDecimal)) {
                    return null;
                }
                return value;
            }
            space();
            if (bytes[at] == ',') {
                at++;
            } else {
                return null; // the object ended without an id
            }
        }
    }

    private void space() {
        while (bytes[at] == ' ' || bytes[at] == '\t' || bytes[at] == '\r' || bytes[at] == '\n') {
            at++;
        }
    }

    private void expect(char c) {
        space();
        if (bytes[at] != c) {
            throw new IllegalStateException();
        }
        at++;
    }

    private void skipString() {
        if (bytes[at] != '"') {
            throw new IllegalStateException();
        }
        at++;
        while (bytes[at] != '"') {
            at += bytes[at] == '\\' ? 2 : 1;
        }
        at++;
    }

    private void skipValue(int depth) {
        if (depth > 64) {
            throw new IllegalStateException();
        }
        byte b = bytes[at];
        if (b == '"') {
            skipString();
        } else if (b == '{' || b == '[') {
            byte close = b == '{' ? (byte) '}' : (byte) ']';
            at++;
            space();
            if (bytes[at] == close) {
                at++;
                return;
            }
            while (true) {
                space();
                if (close == '}') {
                    skipString();
                    space();
                    expect(':');
                    space();
                }
                skipValue(depth + 1);
                space();
                if (bytes[at] == ',') {
                    at++;
                } else if (bytes[at] == close) {
                    at++;
                    return;
                } else {
                    throw new IllegalStateException();
                }
            }
        } else {
            int start = at;
            while (",}] \t\r\n".indexOf(bytes[at]) < 0) {
                at++;
            }
            if (at == start) {
                throw new IllegalStateException();
            }
        }
    }
}
