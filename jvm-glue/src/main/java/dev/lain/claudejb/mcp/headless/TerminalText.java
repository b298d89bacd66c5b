package dev.lain.claudejb.mcp.headless;

/**
 * The one escaper of text bound for a person's terminal. Client names, tool and task names,
 * commands, paths, a peer's command line and log messages can carry bytes a terminal obeys —
 * C0 controls (ESC starts cursor movement, window titles, hidden text; CR overwrites the line),
 * DEL, C1 controls (U+009B is a one-character CSI), bidirectional overrides and isolates that
 * reorder what is shown (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) and other
 * invisible format characters. Each is shown as a visible escape instead — backslash, x and two
 * hex digits for C0 and DEL ({@code \x1b}), backslash, u and four hex digits for the rest (beyond
 * the BMP, the hex digits in braces) — so nothing a
 * client or a repository wrote can move the cursor, retitle the window or make a prompt read as
 * something else. {@link Terminal} and {@link HostLog} write only through here. (A backslash is
 * left as it is, so paths stay readable; a name holding the text of an escape shows as that text.)
 */
final class TerminalText {
    private TerminalText() {
    }

    /** {@code text} with every control or format character escaped, newlines included. */
    static String visible(String text) {
        return escape(text, false);
    }

    /** {@code text} with every control or format character escaped except its line breaks. */
    static String visibleLines(String text) {
        return escape(text, true);
    }

    private static String escape(String text, boolean keepNewlines) {
        if (text == null) {
            return "null";
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); ) {
            int codePoint = text.codePointAt(i);
            int width = Character.charCount(codePoint);
            boolean escaped = needsEscape(codePoint) && !(keepNewlines && codePoint == '\n');
            if (escaped && out == null) {
                out = new StringBuilder(text.length() + 16).append(text, 0, i);
            }
            if (escaped) {
                if (codePoint < 0x80) {
                    out.append(String.format("\\x%02x", codePoint));
                } else if (codePoint <= 0xffff) {
                    out.append(String.format("\\u%04x", codePoint));
                } else {
                    out.append(String.format("\\u{%x}", codePoint));
                }
            } else if (out != null) {
                out.appendCodePoint(codePoint);
            }
            i += width;
        }
        return out == null ? text : out.toString();
    }

    /** C0, DEL, C1, format characters (bidi controls among them), line and paragraph separators, lone surrogates. */
    static boolean needsEscape(int codePoint) {
        if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0x9f)) {
            return true;
        }
        switch (Character.getType(codePoint)) {
            case Character.FORMAT: // U+200B–U+200F, U+202A–U+202E, U+2060–U+206F, U+061C, U+FEFF, tags, …
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SURROGATE:
            case Character.UNASSIGNED:
            case Character.PRIVATE_USE:
                return true;
            default:
                return false;
        }
    }
}
