package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tasks a project declares in {@code .ide-mcp/tasks.json}, re-read on every use:
 *
 * <pre>{@code
 * {"tasks": {
 *   "test":  {"command": ["cargo", "test"], "description": "Runs the tests", "timeoutSeconds": 600},
 *   "build": {"command": ["cargo", "build"], "directory": "rust", "env": {"RUSTFLAGS": "-Dwarnings"}}
 * }}
 * }</pre>
 *
 * A command is an argument list run without a shell, in the project directory (or the
 * {@code directory} below it), with a minimal environment — PATH, HOME, LANG and TERM of the
 * host, and what the task's {@code env} declares — never the host's whole environment.
 *
 * <p>A {@link Task} is a snapshot: immutable, with its directory resolved. The guard takes it,
 * the person approves what it shows, and the handler runs that very snapshot (handed over by
 * {@link TaskSnapshots}), so rewriting the file meanwhile changes nothing.
 */
final class TaskCatalog {
    static final String FILE = ".ide-mcp/tasks.json";
    static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
    static final Duration MAX_TIMEOUT = Duration.ofHours(1);
    static final long MAX_FILE_BYTES = 1024 * 1024;
    static final int MAX_ENVIRONMENT_VARIABLES = 100;

    /** One declared task. */
    static final class Task {
        final String name;
        final List<String> command;
        final String description;
        final Duration timeout;
        /** Where it runs: the project directory or a directory below it, resolved when the snapshot was taken. */
        final Path directory;
        /** What the task declares in {@code env}, in file order. */
        final Map<String, String> declaredEnvironment;

        Task(String name, List<String> command, String description, Duration timeout, Path directory,
             Map<String, String> declaredEnvironment) {
            this.name = name;
            this.command = Collections.unmodifiableList(new ArrayList<>(command));
            this.description = description;
            this.timeout = timeout;
            this.directory = directory;
            this.declaredEnvironment = Collections.unmodifiableMap(new LinkedHashMap<>(declaredEnvironment));
        }

        /** The whole environment the task's process gets. */
        Map<String, String> environment() {
            Map<String, String> environment = ProcessRunner.minimalEnvironment();
            environment.putAll(declaredEnvironment);
            return environment;
        }

        /** Everything that decides what runs, as the person approving it reads it. */
        String describe() {
            StringBuilder text = new StringBuilder("`" + name + "` (" + commandLine() + ") in " + directory);
            if (!declaredEnvironment.isEmpty()) {
                text.append(" with");
                for (Map.Entry<String, String> variable : declaredEnvironment.entrySet()) {
                    text.append(' ').append(variable.getKey()).append('=').append(quoted(variable.getValue()));
                }
            }
            return text.toString();
        }

        /** The command as a person reads it (not for running: arguments are never joined for a shell). */
        String commandLine() {
            StringBuilder line = new StringBuilder();
            for (String argument : command) {
                if (line.length() > 0) {
                    line.append(' ');
                }
                line.append(quoted(argument));
            }
            return line.toString();
        }

        private static String quoted(String argument) {
            return argument.isEmpty() || argument.matches(".*[\\s'\"\\\\$`].*") ? Json.write(argument) : argument;
        }
    }

    private final ProjectPaths paths;

    TaskCatalog(ProjectPaths paths) {
        this.paths = paths;
    }

    Path file() {
        return paths.root().resolve(FILE);
    }

    /** The declared tasks, in file order; empty when there is no file. */
    Map<String, Task> load() throws ToolFailure {
        Path file = file();
        String text;
        try {
            Path real = file.toRealPath();
            if (!real.startsWith(paths.root())) {
                throw new ToolFailure(FILE + " leads outside the project; it is ignored");
            }
            if (!Files.isRegularFile(real, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                // A FIFO or a device would block the read (and the thread) for good.
                throw new ToolFailure(FILE + " is not a regular file; it is ignored");
            }
            if (Files.size(real) > MAX_FILE_BYTES) {
                throw new ToolFailure(FILE + " is larger than " + MAX_FILE_BYTES + " bytes");
            }
            text = new String(Files.readAllBytes(real), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new LinkedHashMap<>();
        } catch (IOException e) {
            throw new ToolFailure("cannot read " + FILE + ": " + e.getMessage());
        }
        Object parsed;
        try {
            parsed = Json.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ToolFailure(FILE + " is not valid JSON: " + e.getMessage());
        }
        Object tasks = parsed instanceof Map ? ((Map<?, ?>) parsed).get("tasks") : null;
        if (!(tasks instanceof Map)) {
            throw new ToolFailure(FILE + " must be an object with a \"tasks\" object, e.g. "
                    + "{\"tasks\": {\"test\": {\"command\": [\"cargo\", \"test\"]}}}");
        }
        Map<String, Task> result = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) tasks).entrySet()) {
            String name = (String) entry.getKey();
            result.put(name, task(name, entry.getValue(), paths));
        }
        return result;
    }

    private static Task task(String name, Object value, ProjectPaths paths) throws ToolFailure {
        String where = FILE + ": task `" + name + "`";
        if (!(value instanceof Map)) {
            throw new ToolFailure(where + " must be an object with a \"command\" array");
        }
        Map<?, ?> object = (Map<?, ?>) value;
        Object command = object.get("command");
        List<String> arguments = new ArrayList<>();
        if (command instanceof List) {
            for (Object argument : (List<?>) command) {
                if (!(argument instanceof String)) {
                    throw new ToolFailure(where + ": every element of \"command\" must be a string");
                }
                arguments.add((String) argument);
            }
        }
        if (arguments.isEmpty() || arguments.get(0).isEmpty()) {
            throw new ToolFailure(where + ": \"command\" must be a non-empty array of strings (no shell is used)");
        }
        Object description = object.get("description");
        if (description != null && !(description instanceof String)) {
            throw new ToolFailure(where + ": \"description\" must be a string");
        }
        Duration timeout = DEFAULT_TIMEOUT;
        Object seconds = object.get("timeoutSeconds");
        if (seconds != null) {
            if (!(seconds instanceof BigDecimal) || ((BigDecimal) seconds).signum() <= 0) {
                throw new ToolFailure(where + ": \"timeoutSeconds\" must be a positive number");
            }
            long millis = ((BigDecimal) seconds).movePointRight(3).longValue();
            timeout = Duration.ofMillis(Math.max(1, Math.min(millis, MAX_TIMEOUT.toMillis())));
        }
        Path directory = paths.root();
        Object relative = object.get("directory");
        if (relative != null) {
            if (!(relative instanceof String)) {
                throw new ToolFailure(where + ": \"directory\" must be a string (a directory of the project)");
            }
            directory = paths.existing((String) relative, "directory");
            if (!Files.isDirectory(directory)) {
                throw new ToolFailure(where + ": \"directory\" `" + relative + "` is not a directory");
            }
        }
        Map<String, String> environment = new LinkedHashMap<>();
        Object env = object.get("env");
        if (env != null) {
            if (!(env instanceof Map) || ((Map<?, ?>) env).size() > MAX_ENVIRONMENT_VARIABLES) {
                throw new ToolFailure(where + ": \"env\" must be an object of at most " + MAX_ENVIRONMENT_VARIABLES
                        + " names and string values");
            }
            for (Map.Entry<?, ?> variable : ((Map<?, ?>) env).entrySet()) {
                String key = (String) variable.getKey();
                if (!key.matches("[A-Za-z_][A-Za-z0-9_]*") || !(variable.getValue() instanceof String)
                        || ((String) variable.getValue()).indexOf('\0') >= 0) {
                    throw new ToolFailure(where + ": \"env\" must map names (letters, digits, _) to strings");
                }
                environment.put(key, (String) variable.getValue());
            }
        }
        return new Task(name, arguments, (String) description, timeout, directory, environment);
    }

    /** The task named {@code name}, or a failure that lists the declared ones. */
    Task find(String name) throws ToolFailure {
        Map<String, Task> tasks = load();
        Task task = tasks.get(name);
        if (task == null) {
            throw new ToolFailure(tasks.isEmpty()
                    ? "the project declares no tasks (" + FILE + ")"
                    : "no task `" + name + "`; the project declares: " + String.join(", ", tasks.keySet()));
        }
        return task;
    }
}
