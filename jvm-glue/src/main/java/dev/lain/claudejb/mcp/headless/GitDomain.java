package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import dev.lain.claudejb.mcp.ToolCallContext;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The {@code git} domain on {@code vcs}: status, diff, log and blame, read-only. */
final class GitDomain {
    static final int MAX_DIFF_BYTES = 512 * 1024;
    static final int DEFAULT_LOG_COUNT = 20;
    static final int MAX_LOG_COUNT = 500;
    static final int MAX_BLAME_LINES = 2000;

    private final Git git;
    private final ProjectPaths paths;

    private GitDomain(Git git, ProjectPaths paths) {
        this.git = git;
        this.paths = paths;
    }

    static Domain domain(Git git, ProjectPaths paths, ToolRunner runner) {
        GitDomain domain = new GitDomain(git, paths);
        return Domain.builder("git", Server.VCS)
                .description("The project's git repository, read-only: status, diff, log, blame")
                .tool(Tool.builder("status")
                        .description("The current branch, its upstream and ahead/behind counts, and every changed, "
                                + "staged or untracked file (paths relative to the repository root)")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required()))
                        .handler(runner.handler("status", (context, args) -> domain.status(context)))
                        .build())
                .tool(Tool.builder("diff")
                        .description("The unified diff of the working tree against the index, or of the index against "
                                + "HEAD with staged: true; optionally for one path. Cut at "
                                + (MAX_DIFF_BYTES / 1024) + " KiB.")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required(),
                                Schemas.path("path", "Only this file or directory, relative to the project root"),
                                Schemas.bool("staged", "Show what is staged for the next commit instead")))
                        .handler(runner.handler("diff", (context, args) -> domain.diff(context, args)))
                        .build())
                .tool(Tool.builder("log")
                        .description("Recent commits, newest first: hash, author, date (ISO 8601) and subject; "
                                + "optionally only those touching a path")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required(),
                                Schemas.integerRange("maxCount", "How many commits (default " + DEFAULT_LOG_COUNT + ")",
                                        1, MAX_LOG_COUNT),
                                Schemas.path("path", "Only commits touching this file or directory")))
                        .handler(runner.handler("log", (context, args) -> domain.log(context, args)))
                        .build())
                .tool(Tool.builder("blame")
                        .description("Who last changed each line of a file: commit, author, date, summary and the line; "
                                + "at most " + MAX_BLAME_LINES + " lines per call")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required("path"),
                                Schemas.path("path", "The file, relative to the project root"),
                                Schemas.integer("startLine", "First line (1-based); default 1", 1),
                                Schemas.integer("endLine", "Last line (inclusive)", 1)))
                        .handler(runner.handler("blame", (context, args) -> domain.blame(context, args)))
                        .build())
                .build();
    }

    Object status(ToolCallContext context) throws IOException, InterruptedException, ToolFailure {
        String output = git.check(context, Git.MAX_OUTPUT_BYTES, "status", "--porcelain=v2", "--branch", "-z",
                "--untracked-files=normal", "--ignore-submodules=all").output;
        Map<String, Object> branch = new LinkedHashMap<>();
        List<Object> changes = new ArrayList<>();
        String[] records = output.split("\0");
        for (int i = 0; i < records.length; i++) {
            String record = records[i];
            if (record.startsWith("# branch.")) {
                int space = record.indexOf(' ', 2);
                String key = record.substring("# branch.".length(), space < 0 ? record.length() : space);
                String value = space < 0 ? "" : record.substring(space + 1);
                switch (key) {
                    case "head": branch.put("name", value); break;
                    case "oid": branch.put("commit", value); break;
                    case "upstream": branch.put("upstream", value); break;
                    case "ab": {
                        String[] ab = value.split(" ");
                        branch.put("ahead", Integer.parseInt(ab[0].substring(1)));
                        branch.put("behind", Integer.parseInt(ab[1].substring(1)));
                        break;
                    }
                    default: break;
                }
            } else if (record.startsWith("1 ") || record.startsWith("u ")) {
                String[] fields = record.split(" ", record.startsWith("1 ") ? 9 : 11);
                changes.add(change(fields[1], fields[fields.length - 1], null));
            } else if (record.startsWith("2 ")) {
                String[] fields = record.split(" ", 10);
                String from = i + 1 < records.length ? records[++i] : null;
                changes.add(change(fields[1], fields[9], from));
            } else if (record.startsWith("? ")) {
                changes.add(change("??", record.substring(2), null));
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("branch", branch);
        result.put("clean", changes.isEmpty());
        result.put("changes", changes);
        return result;
    }

    private static Map<String, Object> change(String xy, String path, String renamedFrom) {
        Map<String, Object> change = new LinkedHashMap<>();
        change.put("path", path);
        if (xy.equals("??")) {
            change.put("staged", null);
            change.put("unstaged", "untracked");
        } else {
            change.put("staged", describe(xy.charAt(0)));
            change.put("unstaged", describe(xy.charAt(1)));
        }
        if (renamedFrom != null) {
            change.put("from", renamedFrom);
        }
        return change;
    }

    private static String describe(char code) {
        switch (code) {
            case 'M': return "modified";
            case 'T': return "type changed";
            case 'A': return "added";
            case 'D': return "deleted";
            case 'R': return "renamed";
            case 'C': return "copied";
            case 'U': return "unmerged";
            default: return null;
        }
    }

    Object diff(ToolCallContext context, Args args) throws IOException, InterruptedException, ToolFailure {
        List<String> command = new ArrayList<>();
        command.add("diff");
        if (args.flag("staged")) {
            command.add("--cached");
        }
        command.add("--no-ext-diff");
        command.add("--no-textconv");
        command.add("--ignore-submodules=all");
        command.add("--no-color");
        command.add("--stat=200");
        command.add("--patch");
        String path = args.string("path");
        if (path != null) {
            command.add("--");
            command.add(repositoryPath(path));
        }
        ProcessRunner.Outcome outcome = git.check(context, MAX_DIFF_BYTES, command.toArray(new String[0]));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("staged", args.flag("staged"));
        result.put("empty", outcome.outputBytes == 0);
        result.put("diff", outcome.output);
        if (outcome.truncated) {
            result.put("truncated", "the diff is " + outcome.outputBytes + " bytes; shown are the first "
                    + MAX_DIFF_BYTES + "; ask for one path at a time");
        }
        return result;
    }

    Object log(ToolCallContext context, Args args) throws IOException, InterruptedException, ToolFailure {
        int count = args.integer("maxCount", DEFAULT_LOG_COUNT, 1, MAX_LOG_COUNT);
        List<String> command = new ArrayList<>();
        command.add("log");
        command.add("--max-count=" + count);
        command.add("--no-color");
        command.add("--no-show-signature");
        command.add("-z");
        command.add("--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s");
        String path = args.string("path");
        if (path != null) {
            command.add("--");
            command.add(repositoryPath(path));
        }
        ProcessRunner.Outcome outcome = git.run(context, Git.TIMEOUT, Git.MAX_OUTPUT_BYTES, command.toArray(new String[0]));
        if (outcome.exitCode != 0) {
            String message = outcome.errors.trim();
            if (message.contains("does not have any commits")) {
                Map<String, Object> empty = new LinkedHashMap<>();
                empty.put("commits", new ArrayList<>());
                empty.put("note", "the repository has no commits yet");
                return empty;
            }
            throw new ToolFailure("git log failed (exit " + outcome.exitCode + "): " + message);
        }
        List<Object> commits = new ArrayList<>();
        for (String record : outcome.output.split("\0")) {
            String[] fields = record.trim().split("\u001f", 5);
            if (fields.length < 5) {
                continue;
            }
            Map<String, Object> commit = new LinkedHashMap<>();
            commit.put("commit", fields[0]);
            commit.put("author", fields[1]);
            commit.put("email", fields[2]);
            commit.put("date", fields[3]);
            commit.put("subject", fields[4]);
            commits.add(commit);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("commits", commits);
        return result;
    }

    Object blame(ToolCallContext context, Args args) throws IOException, InterruptedException, ToolFailure {
        String argument = args.requiredString("path");
        Path file = paths.existing(argument, "path");
        if (!Files.isRegularFile(file)) {
            throw new ToolFailure("`" + argument + "` is not a file");
        }
        int start = args.integer("startLine", 1, 1, Integer.MAX_VALUE);
        Integer requestedEnd = args.integer("endLine", null, 1, Integer.MAX_VALUE);
        if (requestedEnd != null && requestedEnd < start) {
            throw new ToolFailure("`endLine` (" + requestedEnd + ") is before `startLine` (" + start + ")");
        }
        int end = requestedEnd == null ? start + MAX_BLAME_LINES - 1 : Math.min(requestedEnd, start + MAX_BLAME_LINES - 1);
        int total = lineCount(file);
        if (start > total) {
            throw new ToolFailure("`" + argument + "` has " + total + " lines; startLine " + start + " is past the end");
        }
        end = Math.min(end, total);
        ProcessRunner.Outcome outcome = git.check(context, Git.MAX_OUTPUT_BYTES, "blame", "--no-textconv", "--line-porcelain",
                "-L", start + "," + end, "--", paths.relative(file));
        List<Object> lines = new ArrayList<>();
        Map<String, Object> current = null;
        for (String line : outcome.output.split("\n")) {
            if (line.startsWith("\t")) {
                if (current != null) {
                    current.put("text", line.substring(1));
                    lines.add(current);
                    current = null;
                }
            } else if (current == null) {
                String[] header = line.split(" ");
                if (header.length >= 3 && header[0].length() >= 40) {
                    current = new LinkedHashMap<>();
                    current.put("line", Integer.parseInt(header[2]));
                    current.put("commit", header[0].substring(0, 12));
                }
            } else if (line.startsWith("author ")) {
                current.put("author", line.substring("author ".length()));
            } else if (line.startsWith("author-time ")) {
                current.put("date", java.time.Instant.ofEpochSecond(Long.parseLong(line.substring("author-time ".length())))
                        .toString());
            } else if (line.startsWith("summary ")) {
                current.put("summary", line.substring("summary ".length()));
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", paths.relative(file));
        result.put("lines", lines);
        if (requestedEnd == null ? end < total : end < Math.min(requestedEnd, total)) {
            result.put("truncated", "stopped at line " + end + " of " + total + "; continue with startLine " + (end + 1));
        }
        return result;
    }

    /** A confined path argument as git sees it: relative to the project directory (git's cwd). */
    private String repositoryPath(String argument) throws ToolFailure {
        return paths.relative(paths.confined(argument, "path"));
    }

    private static int lineCount(Path file) throws IOException {
        int count = 0;
        byte[] buffer = new byte[65536];
        int last = '\n';
        try (java.io.InputStream in = Files.newInputStream(file)) {
            int read;
            while ((read = in.read(buffer)) > 0) {
                for (int i = 0; i < read; i++) {
                    if (buffer[i] == '\n') {
                        count++;
                    }
                }
                last = buffer[read - 1];
            }
        }
        return last == '\n' ? count : count + 1;
    }
}
