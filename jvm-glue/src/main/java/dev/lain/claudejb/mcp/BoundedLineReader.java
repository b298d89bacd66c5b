package dev.lain.claudejb.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Lines from a stream, each at most {@code maxLineBytes}: a longer line is read past and
 * dropped as it arrives — only its first {@link #PREFIX_BYTES} are kept, to name it — so memory
 * never follows the length of a line (a 300 MB line costs what the ceiling allows, not 300 MB).
 */
final class BoundedLineReader {
    /** How much of a line over the ceiling is kept, to find its id. */
    static final int PREFIX_BYTES = 4096;

    /** One line: its text, or, when it was over the ceiling, its first bytes and its length. */
    static final class Line {
        final String text;
        final byte[] prefix;
        final long length;

        private Line(String text, byte[] prefix, long length) {
            this.text = text;
            this.prefix = prefix;
            this.length = length;
        }

        boolean tooLong() {
            return text == null;
        }
    }

    private final InputStream input;
    private final int maxLineBytes;
    private final byte[] buffer = new byte[64 * 1024];
    private int position;
    private int limit;
    /**
     * The line so far, in pieces of at most one read each: no array as long as the line is ever
     * grown (and copied) on the way to the ceiling.
     */
    private final List<byte[]> pieces = new ArrayList<>();

    BoundedLineReader(InputStream input, int maxLineBytes) {
        this.input = input;
        this.maxLineBytes = maxLineBytes;
    }

    /** The next line without its newline (a final line without one too), or null at the end of the stream. */
    Line next() throws IOException {
        pieces.clear();
        byte[] prefix = null;
        long length = 0;
        while (true) {
            if (position == limit) {
                limit = input.read(buffer);
                position = 0;
                if (limit <= 0) {
                    limit = 0;
                    return length == 0 ? null : finish(prefix, length);
                }
            }
            int newline = -1;
            for (int i = position; i < limit; i++) {
                if (buffer[i] == '\n') {
                    newline = i;
                    break;
                }
            }
            int end = newline < 0 ? limit : newline;
            int count = end - position;
            if (prefix == null && length + count > maxLineBytes) {
                // Over the ceiling: keep its start, drop what was gathered, skip the rest as it comes.
                prefix = new byte[(int) Math.min(PREFIX_BYTES, length + count)];
                int filled = 0;
                for (byte[] piece : pieces) {
                    int take = Math.min(piece.length, prefix.length - filled);
                    System.arraycopy(piece, 0, prefix, filled, take);
                    filled += take;
                }
                System.arraycopy(buffer, position, prefix, filled, prefix.length - filled);
                pieces.clear();
            } else if (prefix == null) {
                pieces.add(Arrays.copyOfRange(buffer, position, end));
            }
            length += count;
            position = end;
            if (newline >= 0) {
                position++;
                return finish(prefix, length);
            }
        }
    }

    private Line finish(byte[] prefix, long length) {
        if (prefix != null) {
            return new Line(null, prefix, length);
        }
        byte[] whole = pieces.size() == 1 ? pieces.get(0) : new byte[(int) length];
        if (pieces.size() != 1) {
            int at = 0;
            for (byte[] piece : pieces) {
                System.arraycopy(piece, 0, whole, at, piece.length);
                at += piece.length;
            }
        }
        pieces.clear();
        return new Line(new String(whole, StandardCharsets.UTF_8), null, length);
    }
}
