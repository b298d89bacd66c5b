package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.Test;

/** Frame headers: bounded as a number before conversion, never {@code Integer.parseInt}. */
public class FrameChannelTest {
    private static long parse(String bytes, long max) throws IOException {
        byte[] data = bytes.getBytes(StandardCharsets.ISO_8859_1);
        int[] at = {0};
        return FrameChannel.parseHeader(() -> at[0] < data.length ? data[at[0]++] & 0xff : -1, max);
    }

    private static void rejected(String header, String why) {
        try {
            parse(header, Contract.MAX_FRAME_BYTES);
            fail("the header " + header.replace("\n", "\\n") + " was accepted");
        } catch (IOException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains(why));
        }
    }

    @Test
    public void goodHeaders() throws IOException {
        assertEquals(0, parse("0\n", Contract.MAX_FRAME_BYTES));
        assertEquals(42, parse("42\n", Contract.MAX_FRAME_BYTES));
        assertEquals(Contract.MAX_FRAME_BYTES, parse(Contract.MAX_FRAME_BYTES + "\n", Contract.MAX_FRAME_BYTES));
        assertEquals(-1, parse("", Contract.MAX_FRAME_BYTES));
    }

    @Test
    public void badHeaders() {
        rejected("\n", "empty header");
        rejected("01\n", "leading zero");
        rejected("+1\n", "not a digit");
        rejected(" 1\n", "not a digit");
        rejected("1\r\n", "not a digit");
        rejected("67108865\n", "more than the limit");
        // Ten digits past Integer.MAX_VALUE: rejected by value, not by an overflow.
        rejected("9999999999\n", "more than the limit");
        rejected("2147483648\n", "more than the limit");
        rejected("12", "ended inside a frame header");
    }

    @Test
    public void elevenDigitsAreRejectedEvenUnderAHugeLimit() {
        try {
            parse("10000000000\n", Long.MAX_VALUE);
            fail("eleven digits were accepted");
        } catch (IOException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("more than 10 digits"));
        }
    }
}
