package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import dev.lain.claudejb.mcp.Json;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.TestSupport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.Test;

/**
 * {@code HeadlessHost.main} on a real pseudo-terminal ({@code script} gives it one, so
 * {@code System.console()} is there and it asks), driven by what it writes there and what is typed
 * back: a hostile client's prompts show every control character escaped, and a task runs with a
 * minimal environment, not the host's.
 */
public class PseudoTerminalTest {
    private static final String SECRET = "planted-secret-value-4711";

    /** The host's terminal: every byte it wrote, and a keyboard. */
    private static final class Screen {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final OutputStream keyboard;

        Screen(Process script) {
            this.keyboard = script.getOutputStream();
            InputStream output = script.getInputStream();
            Thread reader = new Thread(() -> {
                byte[] buffer = new byte[8192];
                try {
                    int read;
                    while ((read = output.read(buffer)) > 0) {
                        synchronized (bytes) {
                            bytes.write(buffer, 0, read);
                        }
                    }
                } catch (IOException ignored) {
                    // The terminal closed.
                }
            }, "pseudo-terminal-reader");
            reader.setDaemon(true);
            reader.start();
        }

        byte[] bytes() {
            synchronized (bytes) {
                return bytes.toByteArray();
            }
        }

        String text() {
            return new String(bytes(), StandardCharsets.UTF_8);
        }

        int count(String part) {
            String text = text();
            int count = 0;
            for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
                count++;
            }
            return count;
        }

        /** Waits until {@code part} has appeared {@code times} times; the screen so far. */
        String await(String part, int times) throws InterruptedException {
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (count(part) < times) {
                assertTrue("`" + part + "` did not appear " + times + " times on the terminal:\n" + text(),
                        System.nanoTime() < deadline);
                Thread.sleep(20);
            }
            return text();
        }

        void type(String text) throws IOException {
            keyboard.write(text.getBytes(StandardCharsets.UTF_8));
            keyboard.flush();
        }
    }

    private static String shellQuoted(List<String> command) {
        StringBuilder line = new StringBuilder();
        for (String argument : command) {
            line.append(line.length() == 0 ? "" : " ").append('\'').append(argument.replace("'", "'\\''")).append('\'');
        }
        return line.toString();
    }

    private static String javaLine(String mainClass, String... args) {
        List<String> options = new ArrayList<>();
        String library = System.getProperty("ide.mcp.native.library");
        if (library != null) {
            options.add("-Dide.mcp.native.library=" + library);
        }
        String classpath = TestSupport.mainClasspath() + java.io.File.pathSeparator + System.getProperty("java.class.path");
        return shellQuoted(TestSupport.javaCommand(classpath, options, mainClass, args));
    }

    @Test
    public void hostilePromptsAreShownEscapedAndATaskGetsOnlyAMinimalEnvironment() throws Exception {
        try (TestProject project = new TestProject()) {
            Map<String, Object> task = new LinkedHashMap<>();
            task.put("command", java.util.Arrays.asList("env"));
            task.put("env", java.util.Collections.singletonMap("DECLARED_BY_TASK", "yes"));
            TestProject.write(project.root.resolve(".ide-mcp/tasks.json"),
                    Json.write(java.util.Collections.singletonMap("tasks",
                            java.util.Collections.singletonMap(HostileClientMain.TASK_NAME, task))));

            ProcessBuilder builder = new ProcessBuilder("script", "-q", "-e", "-c",
                    javaLine(HeadlessHost.class.getName(), "--ask-unexpected", "--stop-on-stdin-eof",
                            "--base", project.temp.toString(), project.root.toString()), "/dev/null")
                    .redirectErrorStream(true);
            builder.environment().put("SECRET_X", SECRET);
            builder.environment().put("TERM", "xterm");
            Process script = builder.start();
            Screen screen = new Screen(script);
            Process client = null;
            try {
                Matcher ready = Pattern.compile(Pattern.quote(TestSupport.READY_LINE_PREFIX) + "(\\S+)")
                        .matcher(screen.await(TestSupport.READY_LINE_PREFIX, 1));
                assertTrue(ready.find());
                Path socket = Paths.get(ready.group(1)).resolve(Server.RUN.socketFileName());

                client = new ProcessBuilder(TestSupport.javaCommand(
                        TestSupport.mainClasspath() + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                        new ArrayList<>(), HostileClientMain.class.getName(), socket.toString(),
                        HostileClientMain.COMMAND_LINE_ARGUMENT))
                        .redirectErrorStream(true).start();

                String admission = screen.await("Allow it? [y/N]", 1);
                assertTrue(admission, admission.contains("\\x1b[1A\\x1b[2Kallow-me\\x0d"));
                screen.type("y\n");

                String confirmation = screen.await("[y/N]", 2);
                assertTrue(confirmation, confirmation.contains(
                        "friendly\\x1b[H\\x1b[2J\\x1b]0;owned\\x07\\u009b31m\\u202eevil\\u2066 (pid "));
                assertTrue(confirmation, confirmation.contains("build\\x1b[8mhidden\\x1b[0m\\u200f\\u061c"));
                screen.type("y\n");

                String result = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertTrue("the client ends", client.waitFor(60, TimeUnit.SECONDS));
                assertTrue(result, result.startsWith("OK "));
                assertTrue(result, result.contains("DECLARED_BY_TASK=yes"));
                assertTrue(result, result.contains("PATH="));
                assertTrue(result, result.contains("TERM=xterm"));
                assertFalse("the host's environment reached the task: " + result, result.contains(SECRET));
                assertFalse(result, result.contains("SECRET_X"));

                screen.type("\u0004"); // end of input: the host stops
                assertTrue("the host stops when its input ends", script.waitFor(60, TimeUnit.SECONDS));
                assertEquals(0, script.exitValue());
            } finally {
                if (client != null) {
                    client.destroyForcibly();
                }
                script.descendants().forEach(ProcessHandle::destroyForcibly);
                script.destroyForcibly();
            }
            byte[] written = screen.bytes();
            String text = screen.text();
            assertTrue(text, text.contains("\\x1b"));
            for (int i = 0; i < written.length; i++) {
                int b = written[i] & 0xff;
                assertTrue("a raw control byte 0x" + Integer.toHexString(b) + " reached the terminal at " + i + ":\n" + text,
                        b != 0x1b && b != 0x07 && b != 0x9b);
                if (b == 0xc2 && i + 1 < written.length) {
                    int next = written[i + 1] & 0xff;
                    assertFalse("a raw C1 control reached the terminal:\n" + text, next >= 0x80 && next <= 0x9f);
                }
                if (b == 0xe2 && i + 2 < written.length) {
                    int second = written[i + 1] & 0xff;
                    int third = written[i + 2] & 0xff;
                    boolean bidi = (second == 0x80 && ((third >= 0xaa && third <= 0xae) || third == 0x8e || third == 0x8f))
                            || (second == 0x81 && third >= 0xa6 && third <= 0xa9);
                    assertFalse("a raw bidirectional control reached the terminal:\n" + text, bidi);
                }
            }
            assertFalse(text, text.contains("\u061c"));
        }
    }
}
