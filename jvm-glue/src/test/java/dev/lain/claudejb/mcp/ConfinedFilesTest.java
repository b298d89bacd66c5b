package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * {@link ConfinedFiles}, the API a plugin's tools read the project through: the credential
 * rule lifted only by the guard's explicit allow, refusals as {@link FileAccessException},
 * and a search stopped by its call's cancellation.
 */
public class ConfinedFilesTest {
    private static final String KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE\n-----END OPENSSH PRIVATE KEY-----\n";

    private Path temp;
    private Path root;
    private ConfinedFiles files;

    @Before
    public void project() throws Exception {
        temp = Files.createTempDirectory("confined").toRealPath();
        root = Files.createDirectories(temp.resolve("project"));
        Files.write(Files.createDirectories(root.resolve("deploy")).resolve("id_rsa_prod"), KEY.getBytes(StandardCharsets.UTF_8));
        Files.write(root.resolve("notes.txt"), "PRIVATE notes, no key\n".getBytes(StandardCharsets.UTF_8));
        Files.write(temp.resolve("outside.txt"), "outside\n".getBytes(StandardCharsets.UTF_8));
        Files.createSymbolicLink(root.resolve("out"), temp.resolve("outside.txt"));
        files = ConfinedFiles.open(root);
    }

    @After
    public void close() throws Exception {
        files.close();
        TestSupport.deleteRecursively(temp);
    }

    /** A tool that reads `path` through the files, answering with the content or the refusal. */
    private Tool reader() {
        return Tool.builder("read").description("Reads a file").readOnly()
                .inputSchema("{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}")
                .handler(context -> {
                    try {
                        Map<String, Object> read = files.readLines(context, context.stringArgument("path"), null, null, null);
                        context.completeText((String) read.get("content"));
                    } catch (FileAccessException e) {
                        context.fail(e.getMessage());
                    }
                })
                .build();
    }

    private McpClient.ToolResult readThroughAServer(Verdict verdict) throws Exception {
        try (Fixture fixture = new Fixture(request -> verdict, null, options -> { })) {
            fixture.servers.registerDomain(Fixture.oneTool(reader()));
            try (McpClient client = fixture.client(Server.CODE)) {
                return client.run("read", "{\"path\":\"deploy/id_rsa_prod\"}");
            }
        }
    }

    @Test
    public void aKeyIsWithheldUnlessTheGuardAllowsExplicitly() throws Exception {
        McpClient.ToolResult allowed = readThroughAServer(Verdict.allow());
        assertTrue(allowed.text(), allowed.isError());
        assertTrue(allowed.text(), allowed.text().contains("withheld") && allowed.text().contains("private key"));
        assertFalse(allowed.text(), allowed.text().contains("b3BlbnNz"));
        McpClient.ToolResult explicit = readThroughAServer(Verdict.allowExplicitly());
        assertFalse(explicit.text(), explicit.isError());
        assertTrue(explicit.text(), explicit.text().contains("b3BlbnNzaC1rZXktdjE"));
    }

    @Test
    public void searchFindListAndStatFromJava() {
        Map<String, Object> found = files.searchText(null, new ConfinedFiles.Search("PRIVATE"));
        List<?> matches = (List<?>) found.get("matches");
        assertEquals(found.toString(), 1, matches.size());
        assertEquals("notes.txt", ((Map<?, ?>) matches.get(0)).get("path"));
        assertEquals(1, ((Number) found.get("filesWithheld")).intValue());
        Map<String, Object> find = files.findFiles(null, new ConfinedFiles.Find("*"));
        assertEquals(List.of("notes.txt"), find.get("files"));
        Map<String, Object> listing = files.listDirectory("", 10);
        assertEquals(3, ((Number) listing.get("total")).intValue());
        assertEquals("symlink", files.stat("out").get("type"));
        assertEquals("notes.txt", files.relative(root.resolve("notes.txt").toString()));
        for (String refused : new String[] {"out", "../outside.txt", temp.resolve("outside.txt").toString()}) {
            try {
                files.readLines(null, refused, null, null, null);
                throw new AssertionError(refused + " was read");
            } catch (FileAccessException expected) {
                assertTrue(expected.getMessage(), expected.getMessage().contains("outside the project")
                        || expected.getMessage().contains("not a path inside the project"));
            }
        }
        try {
            files.searchText(null, new ConfinedFiles.Search("(?<=look)behind"));
            throw new AssertionError("look-behind compiled");
        } catch (FileAccessException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("Rust regex syntax"));
        }
    }

    @Test
    public void aCancelledCallStopsItsSearch() {
        ToolCallContext context = new ToolCallContext(-1, 0, "{}", false);
        context.fireCancelled();
        try {
            files.searchText(context, new ConfinedFiles.Search("PRIVATE"));
            throw new AssertionError("a cancelled call searched");
        } catch (CancellationException expected) {
            assertTrue(expected.getMessage().contains("cancelled"));
        }
        try {
            files.findFiles(context, new ConfinedFiles.Find("*"));
            throw new AssertionError("a cancelled call searched");
        } catch (CancellationException expected) {
            assertTrue(expected.getMessage().contains("cancelled"));
        }
    }

    @Test
    public void aClosedRootRefusesEverything() throws Exception {
        ConfinedFiles other = ConfinedFiles.open(root);
        other.close();
        try {
            other.stat("notes.txt");
            throw new AssertionError("a closed root answered");
        } catch (IllegalStateException expected) {
            assertTrue(expected.getMessage().contains("closed"));
        }
    }
}
