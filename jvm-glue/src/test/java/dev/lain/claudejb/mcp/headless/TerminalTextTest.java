package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;

import org.junit.Test;

/** The one escaper of terminal text: what it shows for each kind of character. */
public class TerminalTextTest {
    @Test
    public void controlAndFormatCharactersAreShownEscapedAndTheRestIsLeftAlone() {
        String plain = "Run task `build` (cargo build) in /home/ada/proj é 日本 \\x1b?";
        assertSame(plain, TerminalText.visible(plain));
        assertEquals("\\x1b[2J\\x07\\x00\\x0d\\x0a\\x09\\x7f", TerminalText.visible("\u001b[2J\u0007\u0000\r\n\t\u007f"));
        assertEquals("\\u009b31m\\u0085", TerminalText.visible("\u009b31m\u0085"));
        assertEquals("a\\u202eb\\u202ac\\u2066d\\u2069e\\u200ef\\u200fg\\u061ch",
                TerminalText.visible("a\u202eb\u202ac\u2066d\u2069e\u200ef\u200fg\u061ch"));
        assertEquals("\\u200b\\ufeff\\u2028\\u2029\\u00ad", TerminalText.visible("\u200b\ufeff\u2028\u2029\u00ad"));
        assertEquals("tag\\u{e0041}", TerminalText.visible("tag\udb40\udc41"));
        assertEquals("lone \\ud800 surrogate", TerminalText.visible("lone \ud800 surrogate"));
        assertEquals("one\ntwo\\x1b", TerminalText.visibleLines("one\ntwo\u001b"));
    }
}
