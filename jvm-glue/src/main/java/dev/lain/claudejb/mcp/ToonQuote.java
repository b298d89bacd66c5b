package dev.lain.claudejb.mcp;

import static dev.lain.claudejb.mcp.ToonNumber.isAsciiDigit;
import static dev.lain.claudejb.mcp.ToonNumber.isNumericLike;

/**
 * Strings and keys ({@code rust/protocol/src/toon/quote.rs}): when the encoder must quote, how it
 * escapes, and how the decoder finds and unescapes a quoted string. The escape set is
 * {@code \\ \" \n \r \t} plus {@code \}{@code uXXXX} for the other C0 controls; the decoder
 * rejects surrogate escapes.
 */
final class ToonQuote {
    private ToonQuote() {
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

    static void pushKey(String key, StringBuilder out) {
        if (keyIsBare(key)) {
            out.append(key);
        } else {
            pushQuoted(key, out);
        }
    }

    static void pushStringValue(String text, char delimiter, StringBuilder out) {
        if (valueNeedsQuotes(text, delimiter)) {
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

    /** Index of the quote closing the one at {@code open}, or -1. */
    static int findClosingQuote(String text, int open, int limit) {
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

    /** The quoted string opening at {@code open}: [value, index after the closing quote]. */
    static Object[] decodeQuoted(String text, int open, int limit) {
        StringBuilder out = new StringBuilder();
        int i = open + 1;
        while (true) {
            if (i >= limit) {
                throw new ToonContentError(open, "unterminated string: missing closing quote");
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
                throw new ToonContentError(open, "unterminated string: missing closing quote");
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
                        throw new ToonContentError(at, "invalid escape: \\u needs exactly four hex digits");
                    }
                    int code = 0;
                    for (int k = 0; k < 4; k++) {
                        int digit = Character.digit(text.charAt(i + k), 16);
                        if (digit < 0) {
                            throw new ToonContentError(at, "invalid escape: \\u needs exactly four hex digits");
                        }
                        code = code * 16 + digit;
                    }
                    if (code >= 0xD800 && code <= 0xDFFF) {
                        throw new ToonContentError(at, "invalid escape: \\u escapes may not encode surrogates");
                    }
                    out.append((char) code);
                    i += 4;
                    break;
                }
                default:
                    throw new ToonContentError(at, "invalid escape: only \\\\ \\\" \\n \\r \\t and \\uXXXX are allowed");
            }
        }
    }
}
