package dev.lain.claudejb.mcp;

/**
 * The decode budget ({@code rust/protocol/src/budget.rs}): how many bytes of heap the value
 * decoded from one message may take. {@link ToonDecoder} and {@link Json#parse} count what they
 * build while they build it and stop as soon as the count passes the budget, so a small message
 * cannot expand into a huge value (a dense array of one-digit numbers, a table of many rows).
 *
 * <p>The default is {@code 16 × the input's length in chars + 1 MiB}, the bound the Rust
 * decoders hold. The costs are what the JDK's objects take on a 64-bit JVM, rounded up: a
 * {@link java.util.LinkedHashMap} entry with its share of the hash table, an
 * {@link java.util.ArrayList} slot with its growth slack, a {@link String} with its array, a
 * {@link java.math.BigDecimal}. Keys a table's rows share are one {@link String} in Java, so a
 * row is charged its entries, not copies of its field names. Booleans and {@code null} are
 * shared objects and cost only their slot.
 */
final class DecodeBudget {
    /** Bytes of decoded value allowed per char of input. */
    static final long BYTES_PER_INPUT_CHAR = 16;

    /** Bytes of decoded value every message may take whatever its size. */
    static final long BASE_BYTES = 1024 * 1024;

    /** An array element besides its value: an {@code ArrayList} slot and its growth slack. */
    static final long ELEMENT_BYTES = 16;

    /** An object entry besides its key and value: the map's entry and its hash-table slot. */
    static final long ENTRY_BYTES = 64;

    /** A map or a list itself, with its first table or backing array. */
    static final long CONTAINER_BYTES = 64;

    /** A string besides its characters: the {@code String} and its array's header. */
    static final long STRING_BYTES = 40;

    /** A number: a {@code BigDecimal}; longer ones also carry their digits. */
    static final long NUMBER_BYTES = 48;

    /** A field name of a table header: its column, its list slot and its duplicate check. */
    static final long COLUMN_BYTES = 96;

    /** A budget that never runs out. */
    static final long UNLIMITED = Long.MAX_VALUE;

    /** The whole budget, for the message. */
    final long limit;
    private final int inputLength;
    private long left;

    DecodeBudget(long limit, int inputLength) {
        if (limit < 0) {
            throw new IllegalArgumentException("a decode budget must not be negative, not " + limit);
        }
        this.limit = limit;
        this.inputLength = inputLength;
        this.left = limit;
    }

    /** The default budget of an input of {@code inputLength} chars: {@code 16 × inputLength + 1 MiB}. */
    static long defaultFor(int inputLength) {
        return BYTES_PER_INPUT_CHAR * Math.max(0, inputLength) + BASE_BYTES;
    }

    /** Takes {@code bytes} from what is left; {@code false} (and nothing taken) when that is not enough. */
    boolean take(long bytes) {
        if (bytes > left) {
            return false;
        }
        left -= bytes;
        return true;
    }

    /** Gives back {@code bytes} taken for something that no longer exists. */
    void giveBack(long bytes) {
        left = left > UNLIMITED - bytes ? UNLIMITED : left + bytes;
    }

    /** The error text once the budget is spent, the Rust decoders' words. */
    String message() {
        long times = limit / Math.max(1, inputLength);
        return "the message would take more than " + limit + " bytes to decode (" + times
                + "\u00d7 its size); send less";
    }

    /** What a decoded string of {@code length} chars takes (UTF-16, the larger coding). */
    static long string(int length) {
        return STRING_BYTES + 2L * length;
    }

    /** What the number decoded from {@code token} takes. */
    static long number(String token) {
        // Up to 18 digits fit the BigDecimal's own long; more need a BigInteger and its words.
        return NUMBER_BYTES + (token.length() > 18 ? token.length() : 0);
    }
}
