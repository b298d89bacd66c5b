package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.McpClient;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.TestSupport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;

/**
 * The file tools of the headless host against a hostile repository, as the findings were
 * reproduced: planted secrets, a catastrophic pattern, a directory swapped with a link out of
 * the project, a FIFO where a file was.
 */
public class HostileProjectFilesTest {
    private static final String TOKEN = "ghp_R2d2C3poBb8ObiWanKenobi0123456789ab";
    /** Each planted file has a line that {@code SECRET|PRIVATE|password|token} matches. */
    private static final String[][] PLANTED = {
        {".env", "SECRET_KEY=s3cr3t-value\nDATABASE_password=hunter2\n"},
        {".aws/credentials", "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"
                + "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n# token rotated monthly\n"},
        {"deploy/id_rsa_prod", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                + "-----END OPENSSH PRIVATE KEY-----\n"},
        {"secrets.yaml", "# deploy token for CI\ngithub:\n  token: " + TOKEN + "\n"},
    };

    private TestProject project;
    private HeadlessHost host;

    @Before
    public void start() throws Exception {
        project = new TestProject().withGit();
        for (String[] planted : PLANTED) {
            TestProject.write(project.root.resolve(planted[0]), planted[1]);
        }
        Files.write(project.root.resolve(".git/config"),
                ("[remote \"origin\"]\n\turl = https://user:" + TOKEN + "@github.com/o/r.git\n").getBytes(),
                StandardOpenOption.APPEND);
        // An ordinary file the same pattern matches: it is found.
        TestProject.write(project.root.resolve("src/Auth.java"), "class Auth { /* checks the password */ }\n");
        host = HeadlessHost.start(HeadlessHost.config().project(project.root).base(project.temp));
    }

    @After
    public void stop() throws Exception {
        if (host != null) {
            host.close();
        }
        project.close();
    }

    private McpClient client(Server server) throws Exception {
        return TestSupport.initializedClient(host.servers().socketPath(server), Duration.ofSeconds(120));
    }

    private static void assertContains(String text, String... parts) {
        for (String part : parts) {
            assertTrue("expected `" + part + "` in:\n" + text, text.contains(part));
        }
    }

    @Test
    public void searchShowsNoLineOfAPlantedSecretAndSaysHowManyFilesWereWithheld() throws Exception {
        try (McpClient code = client(Server.CODE)) {
            McpClient.ToolResult result = code.run("search_text", "{\"pattern\":\"SECRET|PRIVATE|password|token\"}");
            String text = result.text();
            assertFalse(text, result.isError());
            for (String[] planted : PLANTED) {
                // A row of the matches table starts with its path.
                assertFalse(planted[0] + " leaked:\n" + text, text.contains(planted[0] + ","));
            }
            assertContains(text, "src/Auth.java,1,");
            for (String secret : new String[] {"hunter2", "s3cr3t", "ghp_", "wJalr", "OPENSSH"}) {
                assertFalse(secret + " leaked:\n" + text, text.contains(secret));
            }
            assertContains(text, "filesWithheld: \"4 (the credential rule");
            McpClient.ToolResult found = code.run("find_files", "{\"glob\":\"*\"}");
            assertFalse(found.text(), found.isError());
            assertContains(found.text(), "README.md", "filesWithheld: \"4 (");
            assertFalse(found.text(), found.text().contains("id_rsa_prod") || found.text().contains("secrets.yaml"));
            // list_directory still shows the names.
            assertContains(code.run("list_directory", "{}").text(), ".env,file", "secrets.yaml,file", "deploy,directory");
        }
    }

    @Test
    public void readFileRefusesEveryPlantedSecretByNameOrContent() throws Exception {
        List<String> paths = new ArrayList<>();
        for (String[] planted : PLANTED) {
            paths.add(planted[0]);
        }
        paths.add(".git/config");
        try (McpClient code = client(Server.CODE)) {
            for (String path : paths) {
                McpClient.ToolResult result = code.run("read_file", "{\"path\":\"" + path + "\"}");
                assertTrue(path + " was served:\n" + result.text(), result.isError());
                assertFalse(result.text(), result.text().contains(TOKEN) || result.text().contains("b3BlbnNz"));
            }
            assertContains(code.run("read_file", "{\"path\":\"deploy/id_rsa_prod\"}").text(), "withheld", "private key");
            assertContains(code.run("read_file", "{\"path\":\"secrets.yaml\"}").text(), "withheld", "GitHub token");
            assertContains(code.run("read_file", "{\"path\":\".git/config\"}").text(), "withheld");
        }
    }

    @Test
    public void theCatastrophicPatternCompletesOnFourCallsAndTheServersStillAnswer() throws Exception {
        // 40 `a`s and a `b`: java.util.regex tries about 2^40 ways before it gives up.
        TestProject.write(project.root.resolve("src/aaa.txt"), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\n");
        // And 41 `a`s, which it matches.
        TestProject.write(project.root.resolve("src/match.txt"), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n");
        List<CompletableFuture<McpClient.ToolResult>> searches = new ArrayList<>();
        List<McpClient> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                McpClient code = client(Server.CODE);
                clients.add(code);
                searches.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return code.run("search_text", "{\"pattern\":\"(.*a){25}$\"}");
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }));
            }
            for (CompletableFuture<McpClient.ToolResult> search : searches) {
                // A liveness bound, not a timing: the tool's own deadline is 60 s.
                McpClient.ToolResult result = search.get(110, TimeUnit.SECONDS);
                assertFalse("the search did not complete: " + result.text(), result.isError());
                assertContains(result.text(), "src/match.txt,1,");
                assertFalse(result.text(), result.text().contains("src/aaa.txt"));
            }
            try (McpClient ops = client(Server.OPS); McpClient code = client(Server.CODE)) {
                assertFalse(ops.run("status", "{}").isError());
                assertContains(code.run("read_file", "{\"path\":\"README.md\"}").text(), "A demo project");
            }
        } finally {
            for (McpClient client : clients) {
                client.close();
            }
        }
    }

    @Test
    public void aDirectorySwappedWithALinkOutOfTheProjectNeverServesTheOutsideFile() throws Exception {
        Path outsideDir = Files.createDirectories(project.temp.resolve("outside-dir"));
        TestProject.write(outsideDir.resolve("x.txt"), "OUTSIDE CONTENT\n");
        Path d = project.root.resolve("d");
        TestProject.write(d.resolve("x.txt"), "inside content\n");
        Path link = Files.createSymbolicLink(project.root.resolve("link-out"), outsideDir);
        Path parked = project.root.resolve("d-parked");
        AtomicBoolean swapping = new AtomicBoolean(true);
        CompletableFuture<Integer> swapper = CompletableFuture.supplyAsync(() -> {
            int swaps = 0;
            try {
                while (swapping.get()) {
                    Files.move(d, parked, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(link, d, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(d, link, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(parked, d, StandardCopyOption.ATOMIC_MOVE);
                    swaps++;
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return swaps;
        });
        int escaped = 0;
        int inside = 0;
        try (McpClient code = client(Server.CODE)) {
            for (int i = 0; i < 3000; i++) {
                McpClient.ToolResult result = code.run("read_file", "{\"path\":\"d/x.txt\"}");
                if (result.text().contains("OUTSIDE CONTENT")) {
                    escaped++;
                } else if (!result.isError()) {
                    inside++;
                }
            }
        } finally {
            swapping.set(false);
        }
        int swaps = swapper.get(60, TimeUnit.SECONDS);
        assertEquals("reads of d/x.txt that returned the file outside the project", 0, escaped);
        assertTrue("inside " + inside + ", swaps " + swaps, inside > 0 && swaps > 0);
    }

    @Test
    public void aFifoSwappedInPlaceOfAFileIsRefusedWithoutBlocking() throws Exception {
        Path file = project.root.resolve("src/pipe.txt");
        TestProject.write(file, "plain text\n");
        Path fifo = project.root.resolve("src/fifo-parked");
        Path parked = project.root.resolve("src/file-parked");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
        assertEquals(0, mkfifo.waitFor());
        AtomicBoolean swapping = new AtomicBoolean(true);
        CompletableFuture<Integer> swapper = CompletableFuture.supplyAsync(() -> {
            int swaps = 0;
            try {
                while (swapping.get()) {
                    Files.move(file, parked, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(fifo, file, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(file, fifo, StandardCopyOption.ATOMIC_MOVE);
                    Files.move(parked, file, StandardCopyOption.ATOMIC_MOVE);
                    swaps++;
                }
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return swaps;
        });
        try (McpClient code = client(Server.CODE)) {
            for (int i = 0; i < 1000; i++) {
                McpClient.ToolResult result = code.run("read_file", "{\"path\":\"src/pipe.txt\"}");
                String text = result.text();
                // Opening a FIFO without O_NONBLOCK blocks until a writer comes: the call would
                // end at its deadline, and its thread stay stuck.
                assertFalse(text, text.contains("deadline"));
                if (text.contains("FIFO")) {
                    assertContains(text, "not a regular file");
                } else if (result.isError()) {
                    assertContains(text, "does not exist");
                } else {
                    assertContains(text, "plain text");
                }
            }
        } finally {
            swapping.set(false);
        }
        assertTrue(swapper.get(60, TimeUnit.SECONDS) > 0);
        // With the FIFO left in place, the refusal is certain.
        Files.move(file, parked, StandardCopyOption.ATOMIC_MOVE);
        Files.move(fifo, file, StandardCopyOption.ATOMIC_MOVE);
        try (McpClient code = client(Server.CODE)) {
            assertContains(code.run("read_file", "{\"path\":\"src/pipe.txt\"}").text(), "not a regular file", "FIFO");
            assertFalse(code.run("search_text", "{\"pattern\":\"TODO\"}").isError());
            assertContains(code.run("read_file", "{\"path\":\"README.md\"}").text(), "A demo project");
        }
    }
}
