package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** The {@code files} domain on {@code code}: read, list, find and search the project's files. */
final class FilesDomain {
    /** Larger files are never read. */
    static final long MAX_READ_BYTES = 32L * 1024 * 1024;
    /** Larger files are read only in line ranges. */
    static final long MAX_WHOLE_READ_BYTES = 256 * 1024;
    /** The most text one read_file answers with; the rest is left for the next range. */
    static final int MAX_CONTENT_CHARS = 200 * 1024;
    static final int MAX_DIRECTORY_ENTRIES = 2000;
    static final int DEFAULT_FIND_RESULTS = 200;
    static final int MAX_FIND_RESULTS = 2000;
    static final int DEFAULT_SEARCH_RESULTS = 100;
    static final int MAX_SEARCH_RESULTS = 1000;
    /** Larger files are skipped by search_text. */
    static final long MAX_SEARCH_FILE_BYTES = 8L * 1024 * 1024;
    static final int MAX_MATCH_LINE_CHARS = 300;

    private final ProjectPaths paths;
    private final ProjectFiles files;

    private FilesDomain(ProjectPaths paths, ProjectFiles files) {
        this.paths = paths;
        this.files = files;
    }

    static Domain domain(ProjectPaths paths, ProjectFiles files, ToolRunner runner) {
        FilesDomain domain = new FilesDomain(paths, files);
        return Domain.builder("files", Server.CODE)
                .description("Read, list, find and search the files of the project " + paths.root().getFileName()
                        + " (paths are relative to the project root)")
                .tool(Tool.builder("read_file")
                        .description("Reads a text file of the project, whole or a range of lines (1-based, inclusive). "
                                + "Files over " + (MAX_WHOLE_READ_BYTES / 1024) + " KiB must be read in ranges; binary files are refused.")
                        .readOnly()
                        .deadline(Duration.ofSeconds(30))
                        .inputSchema(Schemas.object(Schemas.required("path"),
                                Schemas.path("path", "The file, relative to the project root"),
                                Schemas.integer("startLine", "First line to read (1-based); default 1", 1),
                                Schemas.integer("endLine", "Last line to read (inclusive); default the end", 1)))
                        .handler(runner.handler("read_file", (context, args) -> domain.readFile(args)))
                        .build())
                .tool(Tool.builder("list_directory")
                        .description("Lists a directory of the project: name, type (file, directory, symlink) and size of each entry")
                        .readOnly()
                        .deadline(Duration.ofSeconds(30))
                        .inputSchema(Schemas.object(Schemas.required(),
                                Schemas.path("path", "The directory, relative to the project root; default the root")))
                        .handler(runner.handler("list_directory", (context, args) -> domain.listDirectory(args)))
                        .build())
                .tool(Tool.builder("find_files")
                        .description("Finds files by glob: `*.rs` matches file names anywhere, `src/**/*.java` matches paths "
                                + "from the project root. In a git repository, ignored files are skipped. At most "
                                + MAX_FIND_RESULTS + " results.")
                        .readOnly()
                        .deadline(Duration.ofSeconds(60))
                        .inputSchema(Schemas.object(Schemas.required("glob"),
                                Schemas.string("glob", "The glob, e.g. `*.java` or `src/**/test_*.py`"),
                                Schemas.path("path", "Only under this directory; default the project root"),
                                Schemas.integerRange("maxResults", "The most paths to return (default "
                                        + DEFAULT_FIND_RESULTS + ")", 1, MAX_FIND_RESULTS)))
                        .handler(runner.handler("find_files", (context, args) -> domain.findFiles(args)))
                        .build())
                .tool(Tool.builder("search_text")
                        .description("Searches the project's text files for a regular expression (Java syntax), line by line; "
                                + "skips .git, ignored files in a git repository, binary files and files over "
                                + (MAX_SEARCH_FILE_BYTES / (1024 * 1024)) + " MiB")
                        .readOnly()
                        .deadline(Duration.ofSeconds(60))
                        .inputSchema(Schemas.object(Schemas.required("pattern"),
                                Schemas.string("pattern", "The regular expression, e.g. `fn\\s+main` or `TODO`"),
                                Schemas.string("glob", "Only files matching this glob, e.g. `*.rs`"),
                                Schemas.path("path", "Only under this directory (or in this file); default the project root"),
                                Schemas.integerRange("maxResults", "The most matching lines to return (default "
                                        + DEFAULT_SEARCH_RESULTS + ")", 1, MAX_SEARCH_RESULTS),
                                Schemas.bool("ignoreCase", "Match case-insensitively")))
                        .handler(runner.handler("search_text", (context, args) -> domain.searchText(args)))
                        .build())
                .build();
    }

    Object readFile(Args args) throws ToolFailure, IOException {
        String argument = args.requiredString("path");
        Path file = paths.existing(argument, "path");
        if (Files.isDirectory(file)) {
            throw new ToolFailure("`" + argument + "` is a directory; use list_directory");
        }
        if (!Files.isRegularFile(file)) {
            throw new ToolFailure("`" + argument + "` is not a regular file");
        }
        Integer startLine = args.integer("startLine", null, 1, Integer.MAX_VALUE);
        Integer endLine = args.integer("endLine", null, 1, Integer.MAX_VALUE);
        if (startLine != null && endLine != null && endLine < startLine) {
            throw new ToolFailure("`endLine` (" + endLine + ") is before `startLine` (" + startLine + ")");
        }
        long size = Files.size(file);
        if (size > MAX_READ_BYTES) {
            throw new ToolFailure("`" + argument + "` is " + size + " bytes, too large to read (the limit is "
                    + MAX_READ_BYTES + " bytes); search_text finds lines in it");
        }
        boolean ranged = startLine != null || endLine != null;
        if (!ranged && size > MAX_WHOLE_READ_BYTES) {
            throw new ToolFailure("`" + argument + "` is " + size + " bytes; read it in parts with startLine and endLine "
                    + "(e.g. startLine 1, endLine 2000), or use search_text to find the lines you need");
        }
        if (ProjectFiles.looksBinary(file)) {
            throw new ToolFailure("`" + argument + "` is a binary file (" + size + " bytes); read_file reads text files only");
        }
        String text = ProjectFiles.utf8OrNull(Files.readAllBytes(file));
        if (text == null) {
            throw new ToolFailure("`" + argument + "` is not UTF-8 text; read_file reads text files only");
        }
        String[] lines = text.split("\n", -1);
        int total = text.isEmpty() ? 0 : (text.endsWith("\n") ? lines.length - 1 : lines.length);
        int first = startLine == null ? 1 : startLine;
        int last = endLine == null ? total : Math.min(endLine, total);
        if (total > 0 && first > total) {
            throw new ToolFailure("`" + argument + "` has " + total + " lines; startLine " + first + " is past the end");
        }
        StringBuilder content = new StringBuilder();
        int lastIncluded = first - 1;
        for (int line = first; line <= last; line++) {
            String value = stripCarriageReturn(lines[line - 1]);
            if (content.length() + value.length() + 1 > MAX_CONTENT_CHARS && line > first) {
                break;
            }
            content.append(value).append('\n');
            lastIncluded = line;
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", paths.relative(file));
        result.put("totalLines", total);
        result.put("startLine", first);
        result.put("endLine", Math.max(lastIncluded, first - 1));
        if (lastIncluded < last) {
            result.put("truncated", "the answer stops at line " + lastIncluded + " to stay small; continue with startLine "
                    + (lastIncluded + 1));
        }
        result.put("content", content.toString());
        return result;
    }

    private static String stripCarriageReturn(String line) {
        return line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
    }

    Object listDirectory(Args args) throws ToolFailure, IOException {
        String argument = args.string("path");
        Path directory = paths.existing(argument, "path");
        if (!Files.isDirectory(directory)) {
            throw new ToolFailure("`" + argument + "` is a file, not a directory; use read_file");
        }
        List<Path> children = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory)) {
            for (Path child : stream) {
                children.add(child);
            }
        }
        children.sort((a, b) -> a.getFileName().toString().compareTo(b.getFileName().toString()));
        List<Object> entries = new ArrayList<>();
        for (Path child : children) {
            if (entries.size() >= MAX_DIRECTORY_ENTRIES) {
                break;
            }
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", child.getFileName().toString());
            try {
                BasicFileAttributes attributes = Files.readAttributes(child, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                entry.put("type", attributes.isSymbolicLink() ? "symlink" : attributes.isDirectory() ? "directory"
                        : attributes.isRegularFile() ? "file" : "other");
                entry.put("size", attributes.isRegularFile() ? attributes.size() : null);
            } catch (IOException e) {
                entry.put("type", "unreadable");
                entry.put("size", null);
            }
            entries.add(entry);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", paths.relative(directory));
        result.put("entries", entries);
        if (children.size() > entries.size()) {
            result.put("truncated", "showing " + entries.size() + " of " + children.size() + " entries; use find_files to narrow");
        }
        return result;
    }

    Object findFiles(Args args) throws ToolFailure, IOException, InterruptedException {
        Predicate<String> glob = ProjectFiles.glob(args.requiredString("glob"));
        Path base = paths.existing(args.string("path"), "path");
        int max = args.integer("maxResults", DEFAULT_FIND_RESULTS, 1, MAX_FIND_RESULTS);
        List<String> found = new ArrayList<>();
        boolean truncated = false;
        for (String file : ProjectFiles.dedupe(files.under(base))) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException();
            }
            if (glob.test(file)) {
                if (found.size() >= max) {
                    truncated = true;
                    break;
                }
                found.add(file);
            }
        }
        found.sort(null);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("files", found);
        result.put("count", found.size());
        if (truncated) {
            result.put("truncated", "more than " + max + " files match; narrow the glob or the path, or raise maxResults (up to "
                    + MAX_FIND_RESULTS + ")");
        }
        return result;
    }

    Object searchText(Args args) throws ToolFailure, IOException, InterruptedException {
        String expression = args.requiredString("pattern");
        Pattern pattern;
        try {
            pattern = Pattern.compile(expression, args.flag("ignoreCase") ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0);
        } catch (PatternSyntaxException e) {
            throw new ToolFailure("`pattern` is not a valid regular expression: " + e.getDescription()
                    + " near index " + e.getIndex());
        }
        Predicate<String> glob = ProjectFiles.glob(args.string("glob"));
        Path base = paths.existing(args.string("path"), "path");
        int max = args.integer("maxResults", DEFAULT_SEARCH_RESULTS, 1, MAX_SEARCH_RESULTS);
        List<Object> matches = new ArrayList<>();
        int searched = 0;
        int skipped = 0;
        boolean truncated = false;
        outer:
        for (String relative : ProjectFiles.dedupe(files.under(base))) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException();
            }
            if (!glob.test(relative)) {
                continue;
            }
            Path file = paths.root().resolve(relative);
            String text = readSearchable(file);
            if (text == null) {
                skipped++;
                continue;
            }
            searched++;
            int lineNumber = 0;
            int start = 0;
            while (start <= text.length()) {
                int end = text.indexOf('\n', start);
                if (end < 0) {
                    end = text.length();
                    if (start == end) {
                        break;
                    }
                }
                lineNumber++;
                String line = stripCarriageReturn(text.substring(start, end));
                Matcher matcher = pattern.matcher(line);
                if (matcher.find()) {
                    if (matches.size() >= max) {
                        truncated = true;
                        break outer;
                    }
                    Map<String, Object> match = new LinkedHashMap<>();
                    match.put("path", relative);
                    match.put("line", lineNumber);
                    match.put("text", excerpt(line, matcher.start()));
                    matches.add(match);
                }
                start = end + 1;
            }
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("matches", matches);
        result.put("filesSearched", searched);
        if (skipped > 0) {
            result.put("filesSkipped", skipped + " (binary, not UTF-8, over " + (MAX_SEARCH_FILE_BYTES / (1024 * 1024))
                    + " MiB, or outside the project through a link)");
        }
        if (truncated) {
            result.put("truncated", "stopped at " + max + " matching lines; narrow the pattern, glob or path, or raise "
                    + "maxResults (up to " + MAX_SEARCH_RESULTS + ")");
        }
        return result;
    }

    /** The text of a file worth searching, or null (missing, a link out, too large, binary, not UTF-8). */
    private String readSearchable(Path file) {
        try {
            Path real = file.toRealPath();
            if (!real.startsWith(paths.root()) || !Files.isRegularFile(real) || Files.size(real) > MAX_SEARCH_FILE_BYTES) {
                return null;
            }
            byte[] bytes = Files.readAllBytes(real);
            for (int i = 0, n = Math.min(bytes.length, 8192); i < n; i++) {
                if (bytes[i] == 0) {
                    return null;
                }
            }
            return ProjectFiles.utf8OrNull(bytes);
        } catch (IOException e) {
            return null;
        }
    }

    private static String excerpt(String line, int at) {
        if (line.length() <= MAX_MATCH_LINE_CHARS) {
            return line;
        }
        int from = Math.max(0, Math.min(at - MAX_MATCH_LINE_CHARS / 3, line.length() - MAX_MATCH_LINE_CHARS));
        return (from > 0 ? "…" : "") + line.substring(from, from + MAX_MATCH_LINE_CHARS) + "…";
    }
}
