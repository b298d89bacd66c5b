package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/** Strings cross Java → Rust → socket → Rust → Java exactly, whatever their characters. */
public class StringFidelityTest {
    /** Emoji and other non-BMP characters (surrogate pairs in Java), NUL, a flag, CJK, escapes. */
    static final String AWKWARD = "emoji \uD83D\uDE00 nul [\u0000] math \uD835\uDD18 flag \uD83C\uDDEB\uD83C\uDDF7"
            + " cjk \u6F22\u5B57 quote \" backslash \\ newline \n tab \t bell \u0007 end \uFFFF";

    @Test
    public void awkwardStringsSurviveTheRoundTripExactly() throws Exception {
        BlockingQueue<String> seenByHandler = new ArrayBlockingQueue<>(1);
        BlockingQueue<String> seenByGuard = new ArrayBlockingQueue<>(1);
        SecurityGuard guard = request -> {
            seenByGuard.add((String) request.arguments().get("text"));
            return Verdict.allow();
        };
        try (Fixture fixture = new Fixture(guard, null, options -> { })) {
            fixture.servers.registerDomain(Domain.builder("strings \uD83D\uDE00", Server.CODE)
                    .description("Domain description with \uD83D\uDE00 and \u6F22")
                    .tool(Tool.builder("echo").description("Echoes `text` \uD83D\uDE00").readOnly()
                            .inputSchema("{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}")
                            .handler(context -> {
                                String text = context.stringArgument("text");
                                seenByHandler.add(text);
                                context.complete(Json.write(Map.of("text", text)));
                            }).build())
                    .build());
            try (McpClient client = fixture.client(Server.CODE)) {
                assertTrue(client.domains().contains("Domain description with \uD83D\uDE00 and \u6F22"));
                McpClient.ToolResult result = client.run("echo", Json.write(Map.of("text", AWKWARD)));
                assertFalse(result.text(), result.isError());
                assertEquals(AWKWARD, seenByHandler.poll(5, TimeUnit.SECONDS));
                assertEquals(AWKWARD, seenByGuard.poll(5, TimeUnit.SECONDS));
                assertTrue(result.text(), result.text().contains("emoji \uD83D\uDE00"));
                assertTrue(result.text(), result.text().contains("math \uD835\uDD18 flag \uD83C\uDDEB\uD83C\uDDF7"));
            }
        }
    }

    @Test
    public void aPlainTextResultComesBackExactly() throws Exception {
        String text = "line one \uD83D\uDE00\nline two \u6F22";
        try (Fixture fixture = new Fixture()) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("text").description("Text")
                    .handler(context -> context.completeText(text)).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                McpClient.ToolResult result = client.run("text", "{}");
                assertTrue(result.text(), result.text().contains("\uD83D\uDE00"));
                assertTrue(result.text(), result.text().contains("\u6F22"));
            }
        }
    }

    /**
     * Strings up to 64 KiB cross into and out of the library through a buffer of each thread,
     * longer ones another way: arguments and results on both sides of that length, plain and
     * with a character beyond U+FFFF at the end, come back exactly.
     */
    @Test
    public void stringsOnBothSidesOfTheBufferedLengthComeBackExactly() throws Exception {
        BlockingQueue<String> seenByGuard = new ArrayBlockingQueue<>(16);
        SecurityGuard guard = request -> {
            seenByGuard.add((String) request.arguments().get("text"));
            return Verdict.allow();
        };
        // The whole result goes back to the client: no output budget cuts it.
        try (Fixture fixture = new Fixture(guard, null, options -> options.outputBudgetBytes(1 << 20))) {
            fixture.servers.registerDomain(Fixture.oneTool(Tool.builder("echo").description("Echoes `text`")
                    .inputSchema("{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}")
                    .handler(context -> context.complete(context.argumentsJson())).build()));
            try (McpClient client = fixture.client(Server.CODE)) {
                for (int length : new int[] {65_500, 65_525, 65_526, 65_527, 65_600, 200_000}) {
                    for (String tail : new String[] {"", "\uD83D\uDE00"}) {
                        StringBuilder text = new StringBuilder(length);
                        while (text.length() < length) {
                            text.append((char) ('a' + text.length() % 26));
                        }
                        String sent = text + tail;
                        McpClient.ToolResult result = client.run("echo", Json.write(Map.of("text", sent)));
                        assertFalse(result.isError());
                        assertEquals(sent, seenByGuard.poll(5, TimeUnit.SECONDS));
                        assertTrue("a text of " + length, result.text().contains(sent));
                    }
                }
            }
        }
    }

    @Test
    public void theJsonWriterAndReaderRoundTripTheAwkwardString() {
        assertEquals(AWKWARD, Json.parse(Json.quote(AWKWARD)));
    }
}
