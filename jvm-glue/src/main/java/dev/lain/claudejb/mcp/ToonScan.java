package dev.lain.claudejb.mcp;

import dev.lain.claudejb.mcp.Toon.DecodeException;
import java.util.Arrays;

/**
 * The line scanner ({@code rust/protocol/src/toon/scan.rs}): the structural lines of a document,
 * as offsets into the text. Comment lines and blank lines are skipped (blank ones remembered, as
 * strict mode forbids them inside arrays); strict indentation (no tabs, exact multiples) is
 * checked as lines are read, so errors surface in document order.
 */
final class ToonScan {
    /** One structural line: offsets into the text, and its indentation depth. */
    static final class Line {
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

    final String text;
    final int indent;
    final boolean strict;
    int nextStart;
    int number;
    Line peeked;
    /** The numbers of the blank lines read so far, ascending, in {@code blankLines[0, blankCount)}. */
    int[] blankLines = new int[0];
    int blankCount;
    int lastConsumed;
    private final DecodeBudget budget;

    ToonScan(String text, int indent, boolean strict, DecodeBudget budget) {
        this.text = text;
        this.indent = indent;
        this.strict = strict;
        this.budget = budget;
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

    /** The first blank line after line {@code after}, or -1. */
    int firstBlankLineAfter(int after) {
        int at = Arrays.binarySearch(blankLines, 0, blankCount, after + 1);
        int index = at >= 0 ? at : -at - 1;
        return index < blankCount ? blankLines[index] : -1;
    }

    /** Remembers a blank line; the array's growth is charged to the budget before it happens. */
    private void addBlankLine(int line) {
        if (blankCount == blankLines.length) {
            int capacity = Math.max(16, blankLines.length * 2);
            if (!budget.take(4L * capacity)) {
                throw new DecodeException(line, 1, budget.message());
            }
            blankLines = Arrays.copyOf(blankLines, capacity);
        }
        blankLines[blankCount++] = line;
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
                addBlankLine(number);
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
