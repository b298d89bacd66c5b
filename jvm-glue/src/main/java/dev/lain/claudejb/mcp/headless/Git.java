package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.ToolCallContext;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code git} command line, read-only, in the project directory: an argument list (never a
 * shell), no stdin, no pager, no prompts, no optional locks, no external diff or text
 * conversion programs and no fsmonitor hook, bounded output and a timeout.
 */
final class Git {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final int MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

    private static final List<String> SAFE_CONFIG = Arrays.asList(
            "-c", "core.fsmonitor=false",
            "-c", "core.quotepath=off",
            "-c", "color.ui=false",
            "-c", "diff.external=",
            "-c", "core.pager=cat");

    private final String executable;
    private final Path directory;

    private Git(String executable, Path directory) {
        this.executable = executable;
        this.directory = directory;
    }

    /** The git of {@code directory}, or null when git is missing or it is not inside a work tree. */
    static Git of(Path directory, String executable) {
        Git git = new Git(executable, directory);
        try {
            ProcessRunner.Outcome outcome = git.run(null, TIMEOUT, 4096, "rev-parse", "--is-inside-work-tree");
            return outcome.exitCode == 0 && outcome.output.trim().equals("true") ? git : null;
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null;
        }
    }

    Path directory() {
        return directory;
    }

    /** Runs {@code git <args>} and returns the outcome, whatever its exit code. */
    ProcessRunner.Outcome run(ToolCallContext context, Duration timeout, int maxOutputBytes, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(executable);
        command.add("--no-pager");
        command.add("--literal-pathspecs"); // a path is a path, never pathspec magic like `:(top)`
        command.addAll(SAFE_CONFIG);
        command.addAll(Arrays.asList(args));
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("GIT_TERMINAL_PROMPT", "0");
        environment.put("GIT_OPTIONAL_LOCKS", "0");
        environment.put("GIT_PAGER", "cat");
        environment.put("PAGER", "cat");
        environment.put("GIT_EXTERNAL_DIFF", "");
        return ProcessRunner.run(command, directory, environment, timeout, maxOutputBytes, false, false, context, null);
    }

    /** Runs {@code git <args>}; a non-zero exit is a failure carrying git's message. */
    ProcessRunner.Outcome check(ToolCallContext context, int maxOutputBytes, String... args)
            throws IOException, InterruptedException, ToolFailure {
        ProcessRunner.Outcome outcome = run(context, TIMEOUT, maxOutputBytes, args);
        if (outcome.timedOut) {
            throw new ToolFailure("git " + args[0] + " did not finish within " + TIMEOUT.getSeconds() + " s");
        }
        if (outcome.cancelled) {
            throw new InterruptedException();
        }
        if (outcome.exitCode != 0) {
            String message = outcome.errors.trim();
            throw new ToolFailure("git " + args[0] + " failed (exit " + outcome.exitCode + ")"
                    + (message.isEmpty() ? "" : ": " + message));
        }
        return outcome;
    }
}
