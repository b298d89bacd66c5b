package dev.lain.claudejb.mcp.headless;

import static org.junit.Assert.assertEquals;

import dev.lain.claudejb.mcp.TestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A temporary project on disk: some files, optionally a git repository, a tasks file, and a file outside it. */
final class TestProject implements AutoCloseable {
    final Path temp;
    final Path root;
    final Path outside;

    TestProject() throws IOException {
        temp = Files.createTempDirectory("hh").toRealPath();
        root = Files.createDirectories(temp.resolve("project"));
        outside = temp.resolve("secret.txt");
        write(outside, "a secret outside the project\n");
        write(root.resolve("README.md"), "# Demo\n\nA demo project.\n");
        StringBuilder main = new StringBuilder();
        for (int i = 1; i <= 30; i++) {
            main.append(i == 10 ? "    // TODO: greet politely\n" : "    line " + i + "\n");
        }
        write(root.resolve("src/Main.java"), main.toString());
        write(root.resolve("src/util/Strings.java"), "class Strings { /* TODO later */ }\n");
        Files.write(root.resolve("logo.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 0, 0, 13, 1, 2, 3});
        write(root.resolve(".ide-mcp/tasks.json"), "{\"tasks\": {"
                + "\"hello\": {\"command\": [\"echo\", \"hello from a task\"], \"description\": \"Says hello\"},"
                + "\"slow\": {\"command\": [\"sh\", \"-c\", \"echo $$ > slow.pid; sleep 60\"], \"description\": \"Sleeps\"},"
                + "\"short\": {\"command\": [\"sleep\", \"60\"], \"timeoutSeconds\": 1}"
                + "}}");
        Files.createSymbolicLink(root.resolve("escape.txt"), outside);
        Files.createSymbolicLink(root.resolve("escape-dir"), temp);
    }

    static void write(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, text.getBytes(StandardCharsets.UTF_8));
    }

    /** Makes the project a git repository with one commit ("Initial commit") of every file. */
    TestProject withGit() throws Exception {
        write(root.resolve(".gitignore"), "build/\n");
        write(root.resolve("build/output.txt"), "TODO ignored by git\n");
        git("init", "-q", "-b", "main");
        git("add", "-A");
        git("-c", "user.name=Ada Lovelace", "-c", "user.email=ada@example.com", "commit", "-q", "-m", "Initial commit");
        return this;
    }

    void git(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add("git");
        command.addAll(Arrays.asList(args));
        Process process = new ProcessBuilder(command).directory(root.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(30, TimeUnit.SECONDS);
        assertEquals("git " + String.join(" ", args) + ": " + output, 0, process.exitValue());
    }

    @Override
    public void close() throws IOException {
        TestSupport.deleteRecursively(temp);
    }
}
