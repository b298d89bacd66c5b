package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.ToolCallContext;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code git} command line, read-only, in the project directory: an argument list (never a
 * shell), no stdin, bounded output and a timeout — and no program that the repository names.
 *
 * <p>A repository cloned from anywhere can name programs for git to run: filters
 * ({@code filter.<driver>.clean/smudge/process}) and diff drivers
 * ({@code diff.<driver>.textconv/command}) chosen by {@code .gitattributes} or
 * {@code .git/info/attributes}, an external diff, a pager, an fsmonitor hook, hooks, signature
 * programs ({@code gpg.program}, {@code gpg.ssh.program}, with {@code log.showSignature}),
 * {@code core.sshCommand} and credential helpers (reached by a lazy fetch of a partial clone),
 * in {@code .git/config} or any file it includes. Every call is made so that none of them can
 * run: the process gets a minimal environment (nothing of the host's, so no {@code GIT_DIR},
 * {@code GIT_EXTERNAL_DIFF}, {@code GIT_ASKPASS}, …), and {@link #hardenedConfig} overrides —
 * through {@code GIT_CONFIG_COUNT}, which takes a key and its value apart, so no driver name can
 * break out of its key — every key that names a program, the fixed ones and, for each filter and
 * diff driver the effective configuration defines (read first with {@code git config --list
 * --null}, includes followed), its program keys. The command line adds {@code --no-pager},
 * {@code --no-ext-diff}, {@code --no-textconv} and {@code --no-show-signature} where they apply.
 */
final class Git {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static final int MAX_OUTPUT_BYTES = 4 * 1024 * 1024;
    /** More filter or diff drivers than this in one repository's configuration: git is refused. */
    static final int MAX_DRIVERS = 1000;

    /** Keys that name a program (or would start a transport), each set so that nothing runs. */
    private static final String[][] FIXED_CONFIG = {
        {"core.fsmonitor", "false"},
        {"core.hooksPath", "/dev/null"}, // no hook is found under a path that is not a directory
        {"core.pager", "cat"}, // git's own spelling of "no pager" (it never starts cat)
        {"core.sshCommand", ""},
        {"core.askPass", ""},
        {"core.gitProxy", ""},
        {"core.alternateRefsCommand", ""},
        {"core.quotepath", "off"},
        {"color.ui", "false"},
        {"diff.external", ""},
        {"diff.ignoreSubmodules", "all"}, // a submodule's git would read the submodule's own config
        {"submodule.recurse", "false"},
        {"log.showSignature", "false"},
        {"gpg.program", ""},
        {"gpg.openpgp.program", ""},
        {"gpg.x509.program", ""},
        {"gpg.ssh.program", ""},
        {"gpg.ssh.defaultKeyCommand", ""},
        {"credential.helper", ""}, // an empty helper clears the list of helpers
        {"protocol.allow", "never"}, // no transport at all, so no lazy fetch of a partial clone
        {"gc.auto", "0"},
        {"maintenance.auto", "false"},
    };

    /** The program keys of each kind of driver a repository's attributes can choose. */
    private static final Map<String, String[]> DRIVER_KEYS = new LinkedHashMap<>();

    static {
        DRIVER_KEYS.put("filter", new String[] {"clean", "", "smudge", "", "process", "", "required", "false"});
        DRIVER_KEYS.put("diff", new String[] {"textconv", "", "command", ""});
        DRIVER_KEYS.put("merge", new String[] {"driver", ""});
        DRIVER_KEYS.put("credential", new String[] {"helper", ""});
    }

    private final String executable;
    private final Path directory;

    private Git(String executable, Path directory) {
        this.executable = executable;
        this.directory = directory;
    }

    /** The oldest git that reads {@code GIT_CONFIG_COUNT}, which every override here travels in. */
    static final int[] MINIMUM_VERSION = {2, 31};

    /**
     * The git of {@code directory}, or null when git is missing, older than
     * {@link #MINIMUM_VERSION} (it would ignore the overrides, and run what the repository names),
     * or it is not inside a work tree.
     */
    static Git of(Path directory, String executable) {
        Git git = new Git(executable, directory);
        try {
            ProcessRunner.Outcome version = git.start(null, TIMEOUT, 4096, Arrays.asList(FIXED_CONFIG), "version");
            if (version.exitCode != 0 || !recentEnough(version.output)) {
                HostLog.warn("git tools are not served: `" + executable + " version` says `" + version.output.trim()
                        + "`; git " + MINIMUM_VERSION[0] + "." + MINIMUM_VERSION[1]
                        + " or later is needed to keep the repository's programs from running");
                return null;
            }
            ProcessRunner.Outcome outcome = git.run(null, TIMEOUT, 4096, "rev-parse", "--is-inside-work-tree");
            return outcome.exitCode == 0 && outcome.output.trim().equals("true") ? git : null;
        } catch (IOException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null;
        }
    }

    /** Whether {@code git version} output names a git at least {@link #MINIMUM_VERSION}. */
    static boolean recentEnough(String versionOutput) {
        java.util.regex.Matcher version = java.util.regex.Pattern.compile("git version (\\d+)\\.(\\d+)")
                .matcher(versionOutput);
        if (!version.find()) {
            return false;
        }
        int major = Integer.parseInt(version.group(1));
        int minor = Integer.parseInt(version.group(2));
        return major > MINIMUM_VERSION[0] || (major == MINIMUM_VERSION[0] && minor >= MINIMUM_VERSION[1]);
    }

    Path directory() {
        return directory;
    }

    /** Runs {@code git <args>} and returns the outcome, whatever its exit code. */
    ProcessRunner.Outcome run(ToolCallContext context, Duration timeout, int maxOutputBytes, String... args)
            throws IOException, InterruptedException {
        List<String[]> config = new ArrayList<>(Arrays.asList(FIXED_CONFIG));
        config.addAll(driverOverrides(context));
        return start(context, timeout, maxOutputBytes, config, args);
    }

    private ProcessRunner.Outcome start(ToolCallContext context, Duration timeout, int maxOutputBytes,
                                        List<String[]> config, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(executable);
        command.add("--no-pager");
        command.add("--literal-pathspecs"); // a path is a path, never pathspec magic like `:(top)`
        command.addAll(Arrays.asList(args));
        return ProcessRunner.run(command, directory, environment(config), timeout, maxOutputBytes, false, false,
                context, null);
    }

    /**
     * The whole environment of a git process: the host's PATH, HOME and XDG_CONFIG_HOME (the
     * user's own settings), the C locale (git's messages are parsed), no prompts, no optional
     * locks (a read never writes the index), no lazy fetch, and {@code config} as
     * {@code GIT_CONFIG_KEY_<n>} / {@code GIT_CONFIG_VALUE_<n>}, which come after every
     * configuration file and so win.
     */
    static Map<String, String> environment(List<String[]> config) {
        Map<String, String> environment = ProcessRunner.minimalEnvironment();
        environment.put("LC_ALL", "C");
        String xdg = System.getenv("XDG_CONFIG_HOME");
        if (xdg != null) {
            environment.put("XDG_CONFIG_HOME", xdg);
        }
        environment.put("GIT_TERMINAL_PROMPT", "0");
        environment.put("GIT_OPTIONAL_LOCKS", "0");
        environment.put("GIT_NO_LAZY_FETCH", "1");
        environment.put("GIT_PAGER", "cat");
        environment.put("PAGER", "cat");
        environment.put("GIT_CONFIG_COUNT", Integer.toString(config.size()));
        for (int i = 0; i < config.size(); i++) {
            environment.put("GIT_CONFIG_KEY_" + i, config.get(i)[0]);
            environment.put("GIT_CONFIG_VALUE_" + i, config.get(i)[1]);
        }
        return environment;
    }

    /**
     * For every filter, diff, merge and credential subsection of the effective configuration
     * (every scope, includes followed), its program keys set so that nothing runs.
     */
    private List<String[]> driverOverrides(ToolCallContext context) throws IOException, InterruptedException {
        List<String[]> fixed = Arrays.asList(FIXED_CONFIG);
        ProcessRunner.Outcome listed = start(context, TIMEOUT, MAX_OUTPUT_BYTES, fixed, "config", "--list", "--null");
        if (listed.cancelled) {
            throw new InterruptedException();
        }
        if (listed.timedOut || listed.truncated || listed.exitCode != 0) {
            throw new IOException("cannot read the repository's git configuration"
                    + (listed.truncated ? " (larger than " + MAX_OUTPUT_BYTES + " bytes)" : ": " + listed.errors.trim()));
        }
        return driverOverrides(listed.output);
    }

    /** The overrides for the drivers named in {@code git config --list --null} output. */
    static List<String[]> driverOverrides(String configList) throws IOException {
        Map<String, String[]> drivers = new LinkedHashMap<>();
        for (String record : configList.split("\0")) {
            int newline = record.indexOf('\n');
            String key = newline < 0 ? record : record.substring(0, newline);
            int first = key.indexOf('.');
            int last = key.lastIndexOf('.');
            if (first < 0 || last <= first) {
                continue; // no subsection: not a driver
            }
            String section = key.substring(0, first).toLowerCase(Locale.ROOT);
            String[] programKeys = DRIVER_KEYS.get(section);
            if (programKeys == null) {
                continue;
            }
            String subsection = key.substring(first + 1, last);
            if (!printableAscii(subsection)) {
                // An environment variable cannot carry every byte git can; refuse rather than miss it.
                throw new IOException("the repository's git configuration names a " + section
                        + " driver that is not printable ASCII; git tools are refused in this repository");
            }
            drivers.putIfAbsent(section + "." + subsection, programKeys);
            if (drivers.size() > MAX_DRIVERS) {
                throw new IOException("the repository's git configuration names more than " + MAX_DRIVERS
                        + " drivers; git tools are refused in this repository");
            }
        }
        List<String[]> overrides = new ArrayList<>();
        for (Map.Entry<String, String[]> driver : drivers.entrySet()) {
            String[] keys = driver.getValue();
            for (int i = 0; i < keys.length; i += 2) {
                overrides.add(new String[] {driver.getKey() + "." + keys[i], keys[i + 1]});
            }
        }
        return overrides;
    }

    private static boolean printableAscii(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                return false;
            }
        }
        return true;
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
