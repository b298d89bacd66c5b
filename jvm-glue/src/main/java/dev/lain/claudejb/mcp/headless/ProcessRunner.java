package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.ToolCallContext;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs one program (an argument list, never a shell) in a directory, with no stdin, a bounded
 * capture of its output, a timeout, and cancellation: when the call is cancelled or the time is
 * up, the whole process tree is killed.
 */
final class ProcessRunner {
    /** The null device a child's standard input reads from: {@code NUL} on Windows. */
    private static final File NULL_DEVICE = new File(
            System.getProperty("os.name", "").startsWith("Windows") ? "NUL" : "/dev/null");

    /** What a finished (or killed) process left. */
    static final class Outcome {
        final int exitCode;
        final String output;
        final String errors;
        final boolean truncated;
        final long outputBytes;
        final boolean timedOut;
        final boolean cancelled;
        final long millis;

        Outcome(int exitCode, String output, String errors, boolean truncated, long outputBytes,
                boolean timedOut, boolean cancelled, long millis) {
            this.exitCode = exitCode;
            this.output = output;
            this.errors = errors;
            this.truncated = truncated;
            this.outputBytes = outputBytes;
            this.timedOut = timedOut;
            this.cancelled = cancelled;
            this.millis = millis;
        }
    }

    private ProcessRunner() {
    }

    /** The variables of the host's environment every child gets: PATH, HOME, LANG and TERM (those set). */
    static Map<String, String> minimalEnvironment() {
        Map<String, String> environment = new LinkedHashMap<>();
        for (String name : new String[] {"PATH", "HOME", "LANG", "TERM"}) {
            String value = System.getenv(name);
            if (value != null) {
                environment.put(name, value);
            }
        }
        environment.putIfAbsent("PATH", "/usr/local/bin:/usr/bin:/bin");
        return environment;
    }

    /**
     * Runs {@code command} in {@code directory} with exactly {@code environment} (nothing is
     * inherited; start from {@link #minimalEnvironment()}). Output beyond {@code maxOutputBytes} is dropped
     * (with {@code keepTail}, the start and the end are kept and the middle dropped). With
     * {@code mergeErrors}, stderr is part of the output. {@code onLine} (may be null) sees each
     * complete output line, for progress.
     */
    static Outcome run(List<String> command, Path directory, Map<String, String> environment, Duration timeout,
                       int maxOutputBytes, boolean keepTail, boolean mergeErrors, ToolCallContext context,
                       Consumer<String> onLine) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(directory.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(NULL_DEVICE))
                .redirectErrorStream(mergeErrors);
        builder.environment().clear(); // nothing of the host's environment unless the caller passes it on
        builder.environment().putAll(environment);
        long start = System.nanoTime();
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new IOException("cannot start `" + command.get(0) + "`: " + e.getMessage(), e);
        }
        if (context != null) {
            context.onCancel(() -> killTree(process));
        }
        Capture output = new Capture(process.getInputStream(), maxOutputBytes, keepTail, onLine);
        Capture errors = mergeErrors ? null : new Capture(process.getErrorStream(), 16 * 1024, false, null);
        output.start();
        if (errors != null) {
            errors.start();
        }
        boolean finished;
        try {
            finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            killTree(process);
            throw e;
        }
        if (!finished) {
            killTree(process);
            process.waitFor(5, TimeUnit.SECONDS);
        }
        // A grandchild that kept the pipe open must not hold this call forever.
        output.join(2000);
        if (errors != null) {
            errors.join(2000);
        }
        boolean cancelled = context != null && context.isCancelled();
        return new Outcome(finished ? process.exitValue() : -1, output.text(), errors == null ? "" : errors.text(),
                output.truncated(), output.total(), !finished, cancelled,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    /** Kills {@code process} and every descendant it has now. */
    static void killTree(Process process) {
        List<ProcessHandle> descendants = new ArrayList<>();
        process.descendants().forEach(descendants::add);
        process.destroyForcibly();
        for (ProcessHandle descendant : descendants) {
            descendant.destroyForcibly();
        }
    }

    /** Drains one stream on its own thread, keeping a bounded part of it. */
    private static final class Capture extends Thread {
        private final InputStream stream;
        private final int limit;
        private final boolean keepTail;
        private final Consumer<String> onLine;
        private final ByteArrayOutputStream head = new ByteArrayOutputStream();
        private final byte[] tail;
        private long tailWritten;
        private long total;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        Capture(InputStream stream, int limit, boolean keepTail, Consumer<String> onLine) {
            super("headless-process-output");
            setDaemon(true);
            this.stream = stream;
            this.limit = limit;
            this.keepTail = keepTail;
            this.onLine = onLine;
            this.tail = keepTail ? new byte[limit - limit / 4] : new byte[0];
        }

        @Override
        public void run() {
            byte[] buffer = new byte[8192];
            int headLimit = keepTail ? limit / 4 : limit;
            try (InputStream in = stream) {
                int read;
                while ((read = in.read(buffer)) > 0) {
                    synchronized (this) {
                        for (int i = 0; i < read; i++) {
                            byte b = buffer[i];
                            if (total < headLimit) {
                                head.write(b);
                            } else if (keepTail) {
                                tail[(int) (tailWritten % tail.length)] = b;
                                tailWritten++;
                            }
                            total++;
                            if (onLine != null) {
                                line(b);
                            }
                        }
                    }
                }
            } catch (IOException ignored) {
                // The process was killed or closed its end; what arrived is kept.
            }
        }

        private void line(byte b) {
            if (b == '\n') {
                onLine.accept(new String(line.toByteArray(), StandardCharsets.UTF_8));
                line.reset();
            } else if (line.size() < 1024) {
                line.write(b);
            }
        }

        synchronized boolean truncated() {
            return keepTail ? tailWritten > tail.length : total > limit;
        }

        synchronized long total() {
            return total;
        }

        synchronized String text() {
            String start = new String(head.toByteArray(), StandardCharsets.UTF_8);
            if (!keepTail || tailWritten == 0) {
                return start;
            }
            int length = (int) Math.min(tailWritten, tail.length);
            byte[] end = new byte[length];
            long from = tailWritten - length;
            for (int i = 0; i < length; i++) {
                end[i] = tail[(int) ((from + i) % tail.length)];
            }
            String rest = new String(end, StandardCharsets.UTF_8);
            if (tailWritten > tail.length) {
                long dropped = tailWritten - tail.length;
                return start + "\n[… " + dropped + " bytes of output omitted …]\n" + rest;
            }
            return start + rest;
        }
    }
}
