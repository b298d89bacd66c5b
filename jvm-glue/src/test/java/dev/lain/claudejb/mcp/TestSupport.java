package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What the JVM tests of both packages share, written once: child JVMs and the ready line they
 * print, initialized clients, temporary directories, and outcomes carried back from other
 * threads.
 */
public final class TestSupport {
    /** The line (then the runtime directory) a host prints and logs once its servers are up. */
    public static final String READY_LINE_PREFIX = Contract.READY_LINE_PREFIX;

    private TestSupport() {
    }

    /** The main classes, as the build passes them in {@code ide.mcp.test.classpath}. */
    public static String mainClasspath() {
        String classpath = System.getProperty("ide.mcp.test.classpath");
        assertTrue("the build passes ide.mcp.test.classpath", classpath != null && !classpath.isEmpty());
        return classpath;
    }

    /** {@code java <options> -cp <classpath> <mainClass> <args>}, with the java of this JVM. */
    public static List<String> javaCommand(String classpath, List<String> options, String mainClass, String... args) {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(options);
        command.add("-cp");
        command.add(classpath);
        command.add(mainClass);
        command.addAll(Arrays.asList(args));
        return command;
    }

    /** Reads a host's first line of output, which must be the ready line; the directory it names. */
    public static Path readyDirectory(BufferedReader stdout) throws IOException {
        String ready = stdout.readLine();
        assertTrue(ready, ready != null && ready.startsWith(READY_LINE_PREFIX));
        return Paths.get(ready.substring(READY_LINE_PREFIX.length()));
    }

    /** A client of {@code socket} past {@code initialize}; closed again when that fails. */
    public static McpClient initializedClient(Path socket) throws IOException {
        return initialized(McpClient.connect(socket));
    }

    /** {@link #initializedClient(Path)} with a {@code timeout} for every answer, the first too. */
    public static McpClient initializedClient(Path socket, Duration timeout) throws IOException {
        return initialized(McpClient.connect(socket).timeout(timeout));
    }

    private static McpClient initialized(McpClient client) throws IOException {
        try {
            client.initialize();
        } catch (IOException | RuntimeException e) {
            client.close();
            throw e;
        }
        return client;
    }

    /** Deletes {@code root} and everything below it; nothing when it does not exist. */
    public static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    /**
     * Waits up to 10 s for what another thread reported; its failure, an assert included, is
     * rethrown on the calling thread, where JUnit sees it.
     */
    public static void awaitOutcome(CompletableFuture<?> outcome, String what) throws Exception {
        try {
            outcome.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable failure = e.getCause();
            if (failure instanceof Error) {
                throw (Error) failure;
            }
            if (failure instanceof Exception) {
                throw (Exception) failure;
            }
            throw e;
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(what + " reported nothing within 10 s", e);
        }
    }
}
