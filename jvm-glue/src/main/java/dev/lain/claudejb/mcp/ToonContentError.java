package dev.lain.claudejb.mcp;

/**
 * A problem found while scanning one line's content, at an offset into the text; the decoder
 * turns it into a {@link Toon.DecodeException} with the line and column.
 */
final class ToonContentError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int at;

    ToonContentError(int at, String message) {
        super(message, null, false, false);
        this.at = at;
    }
}
