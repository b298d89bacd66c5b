package dev.lain.claudejb.mcp;

/**
 * The TOON codec's settings ({@code rust/protocol/src/toon/options.rs}): the defaults
 * {@link Toon#decode(String)} uses, the nesting limit, and the delimiters a header may declare.
 */
final class ToonOptions {
    /** Spaces per indentation level, for the encoder and the default decoder. */
    static final int DEFAULT_INDENT = 2;
    /** The decoder's default mode, and the servers': counts, indentation and unique keys checked. */
    static final boolean DEFAULT_STRICT = true;
    /** The deepest nesting of objects and arrays accepted by the decoder. */
    static final int MAX_DEPTH = 128;
    /** The encoder's delimiter, and the one a header declares by omission. */
    static final char DELIMITER = ',';
    /** Every delimiter a header may declare: comma (by omission), tab and pipe. */
    static final String DELIMITERS = ",\t|";

    private ToonOptions() {
    }

    /** How a delimiter is shown in error messages (a tab is invisible). */
    static String display(char delimiter) {
        return delimiter == '\t' ? "\\t" : String.valueOf(delimiter);
    }
}
