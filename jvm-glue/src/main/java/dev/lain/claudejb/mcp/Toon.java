package dev.lain.claudejb.mcp;

/**
 * TOON (Token-Oriented Object Notation, spec v4.4), the payload codec of the framed wire: a
 * port of the library's codec ({@code rust/protocol/src/toon/}) over the values {@link Json}
 * uses — {@link java.util.Map} (insertion-ordered), {@link java.util.List}, {@link String},
 * {@link java.math.BigDecimal} (other {@link Number}s are accepted when encoding),
 * {@link Boolean} and {@code null}.
 *
 * <p>This class is the codec's face. Its parts are package-private classes whose files mirror
 * the Rust modules: {@link ToonEncoder} ({@code encode.rs}), {@link ToonDecoder}
 * ({@code decode.rs}), {@link ToonHeader} ({@code header.rs}), {@link ToonNumber}
 * ({@code number.rs}), {@link ToonQuote} ({@code quote.rs}), {@link ToonScan} ({@code scan.rs}),
 * {@link ToonOptions} ({@code options.rs}); {@link DecodeException} and
 * {@link ToonContentError} are the errors ({@code error.rs}).
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
 * What the decoded value takes is counted while it is built and capped at
 * {@code 16 × the text's length + 1 MiB} bytes ({@link DecodeBudget}), the bound the Rust
 * decoder holds: past it, decoding fails before the value exists.
 */
final class Toon {
    /** The deepest nesting of objects and arrays accepted by the decoder. */
    static final int MAX_DEPTH = ToonOptions.MAX_DEPTH;

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

    /** Encodes {@code value} with the default options (no trailing newline). */
    static String encode(Object value) {
        return ToonEncoder.encode(value);
    }

    /** Decodes a document in strict mode with two-space indentation. */
    static Object decode(String text) {
        return decode(text, ToonOptions.DEFAULT_INDENT, ToonOptions.DEFAULT_STRICT);
    }

    static Object decode(String text, int indent, boolean strict) {
        return ToonDecoder.decode(text, indent, strict);
    }

    /** Decodes within {@code maxDecodedBytes} of value ({@link DecodeBudget#UNLIMITED}: no limit). */
    static Object decode(String text, int indent, boolean strict, long maxDecodedBytes) {
        return ToonDecoder.decode(text, indent, strict, maxDecodedBytes);
    }
}
