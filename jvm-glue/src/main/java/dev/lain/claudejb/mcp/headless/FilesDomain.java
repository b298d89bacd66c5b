package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.ConfinedFiles;
import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.FileAccessException;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import dev.lain.claudejb.mcp.ToolCallContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;

/**
 * The {@code files} domain on {@code code}: read, list, find and search the project's files,
 * every one of them through {@link ConfinedFiles} (confined opens, native search, the
 * credential rule), never through a path of its own.
 */
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
    /** find_files and search_text answer with what they found by then (their deadline is 60 s). */
    static final Duration SEARCH_TIMEOUT = Duration.ofSeconds(50);
    static final String CREDENTIAL_RULE = "the credential rule: names such as .env or id_rsa, or content holding a "
            + "private key, an access token or a URL with a password; read_file refuses them too";

    private final ConfinedFiles files;

    private FilesDomain(ConfinedFiles files) {
        this.files = files;
    }

    static Domain domain(ConfinedFiles files, ToolRunner runner) {
        FilesDomain domain = new FilesDomain(files);
        return Domain.builder("files", Server.CODE)
                .description("Read, list, find and search the files of the project " + files.root().getFileName()
                        + " (paths are relative to the project root)")
                .tool(Tool.builder("read_file")
                        .description("Reads a text file of the project, whole or a range of lines (1-based, inclusive). "
                                + "Files over " + (MAX_WHOLE_READ_BYTES / 1024) + " KiB must be read in ranges; binary files are refused, and so are "
                                + "files that hold credentials (by name, e.g. .env, or by content, e.g. a private key or a token).")
                        .readOnly()
                        .deadline(Duration.ofSeconds(30))
                        .inputSchema(Schemas.object(Schemas.required("path"),
                                Schemas.path("path", "The file, relative to the project root"),
                                Schemas.integer("startLine", "First line to read (1-based); default 1", 1),
                                Schemas.integer("endLine", "Last line to read (inclusive); default the end", 1)))
                        .handler(runner.handler("read_file", (context, args) -> domain.readFile(context, args)))
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
                                + "from the project root (`*` stays within a directory, `**` crosses them). Files ignored by .gitignore, .git "
                                + "itself and symbolic links are skipped, and files that hold credentials are withheld (counted, not "
                                + "listed). At most " + MAX_FIND_RESULTS + " results.")
                        .readOnly()
                        .deadline(Duration.ofSeconds(60))
                        .inputSchema(Schemas.object(Schemas.required("glob"),
                                Schemas.string("glob", "The glob, e.g. `*.java` or `src/**/test_*.py`"),
                                Schemas.path("path", "Only under this directory; default the project root"),
                                Schemas.integerRange("maxResults", "The most paths to return (default "
                                        + DEFAULT_FIND_RESULTS + ")", 1, MAX_FIND_RESULTS)))
                        .handler(runner.handler("find_files", (context, args) -> domain.findFiles(context, args)))
                        .build())
                .tool(Tool.builder("search_text")
                        .description("Searches the project's text files for a regular expression, line by line. The syntax is "
                                + "Rust regex (like RE2: no look-around, no backreferences; `(?i)` for case-insensitive), matched "
                                + "in linear time. Skips .git, files ignored by .gitignore, symbolic links, binary files and files over "
                                + (MAX_SEARCH_FILE_BYTES / (1024 * 1024)) + " MiB; files that hold credentials (by name or "
                                + "content) are withheld and counted in filesWithheld.")
                        .readOnly()
                        .deadline(Duration.ofSeconds(60))
                        .inputSchema(Schemas.object(Schemas.required("pattern"),
                                Schemas.string("pattern", "The regular expression (Rust regex syntax), e.g. `fn\\s+main` or `TODO|FIXME`"),
                                Schemas.string("glob", "Only files matching this glob, e.g. `*.rs`"),
                                Schemas.path("path", "Only under this directory (or in this file); default the project root"),
                                Schemas.integerRange("maxResults", "The most matching lines to return (default "
                                        + DEFAULT_SEARCH_RESULTS + ")", 1, MAX_SEARCH_RESULTS),
                                Schemas.bool("ignoreCase", "Match case-insensitively")))
                        .handler(runner.handler("search_text", (context, args) -> domain.searchText(context, args)))
                        .build())
                .build();
    }

    Object readFile(ToolCallContext context, Args args) throws ToolFailure {
        String argument = args.requiredString("path");
        Integer startLine = args.integer("startLine", null, 1, Integer.MAX_VALUE);
        Integer endLine = args.integer("endLine", null, 1, Integer.MAX_VALUE);
        ConfinedFiles.ReadLimits limits = new ConfinedFiles.ReadLimits()
                .maxFileBytes(MAX_READ_BYTES)
                .maxWholeBytes(MAX_WHOLE_READ_BYTES)
                .maxContentBytes(MAX_CONTENT_CHARS);
        Map<String, Object> read;
        try {
            read = files.readLines(context, argument, startLine, endLine, limits);
        } catch (FileAccessException e) {
            throw new ToolFailure(e.getMessage());
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", display(argument));
        result.put("totalLines", read.get("totalLines"));
        result.put("startLine", read.get("startLine"));
        result.put("endLine", read.get("endLine"));
        if (Boolean.TRUE.equals(read.get("truncated"))) {
            int last = ((Number) read.get("endLine")).intValue();
            result.put("truncated", "the answer stops at line " + last + " to stay small; continue with startLine "
                    + (last + 1));
        }
        result.put("content", read.get("content"));
        return result;
    }

    Object listDirectory(Args args) throws ToolFailure {
        String argument = args.string("path");
        Map<String, Object> listing;
        try {
            listing = files.listDirectory(argument, MAX_DIRECTORY_ENTRIES);
        } catch (FileAccessException e) {
            throw new ToolFailure(e.getMessage());
        }
        List<Object> entries = new ArrayList<>();
        for (Object item : (List<?>) listing.get("entries")) {
            Map<?, ?> listed = (Map<?, ?>) item;
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", listed.get("name"));
            entry.put("type", listed.get("type"));
            entry.put("size", listed.get("size"));
            entries.add(entry);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("path", display(argument));
        result.put("entries", entries);
        int total = ((Number) listing.get("total")).intValue();
        if (total > entries.size()) {
            result.put("truncated", "showing " + entries.size() + " of " + total + " entries; use find_files to narrow");
        }
        return result;
    }

    Object findFiles(ToolCallContext context, Args args) throws ToolFailure, InterruptedException {
        ConfinedFiles.Find find = new ConfinedFiles.Find(args.requiredString("glob"))
                .path(args.string("path"))
                .maxResults(args.integer("maxResults", DEFAULT_FIND_RESULTS, 1, MAX_FIND_RESULTS))
                .timeout(SEARCH_TIMEOUT);
        Map<String, Object> found = run(() -> files.findFiles(context, find));
        List<?> paths = (List<?>) found.get("files");
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("files", paths);
        result.put("count", paths.size());
        withheld(result, found);
        if (Boolean.TRUE.equals(found.get("truncated"))) {
            result.put("truncated", "more files match; narrow the glob or the path, or raise maxResults (up to "
                    + MAX_FIND_RESULTS + ")");
        }
        timedOut(result, found);
        return result;
    }

    Object searchText(ToolCallContext context, Args args) throws ToolFailure, InterruptedException {
        int max = args.integer("maxResults", DEFAULT_SEARCH_RESULTS, 1, MAX_SEARCH_RESULTS);
        ConfinedFiles.Search search = new ConfinedFiles.Search(args.requiredString("pattern"))
                .ignoreCase(args.flag("ignoreCase"))
                .glob(args.string("glob"))
                .path(args.string("path"))
                .maxMatches(max)
                .maxFileBytes(MAX_SEARCH_FILE_BYTES)
                .timeout(SEARCH_TIMEOUT);
        Map<String, Object> found = run(() -> files.searchText(context, search));
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("matches", found.get("matches"));
        result.put("filesSearched", found.get("filesSearched"));
        int skipped = ((Number) found.get("filesSkipped")).intValue();
        if (skipped > 0) {
            result.put("filesSkipped", skipped + " (binary, over " + (MAX_SEARCH_FILE_BYTES / (1024 * 1024))
                    + " MiB, unreadable, or leading outside the project)");
        }
        withheld(result, found);
        if (Boolean.TRUE.equals(found.get("truncated"))) {
            result.put("truncated", "stopped at " + max + " matching lines; narrow the pattern, glob or path, or raise "
                    + "maxResults (up to " + MAX_SEARCH_RESULTS + ")");
        }
        timedOut(result, found);
        return result;
    }

    private interface Search {
        Map<String, Object> run();
    }

    /** A search, with its refusal a tool failure and its cancellation an interrupt (ToolRunner's "cancelled"). */
    private static Map<String, Object> run(Search search) throws ToolFailure, InterruptedException {
        try {
            return search.run();
        } catch (FileAccessException e) {
            throw new ToolFailure(e.getMessage());
        } catch (CancellationException e) {
            throw new InterruptedException("cancelled");
        }
    }

    private static void withheld(Map<String, Object> result, Map<String, Object> found) {
        int withheld = ((Number) found.get("filesWithheld")).intValue();
        if (withheld > 0) {
            result.put("filesWithheld", withheld + " (" + CREDENTIAL_RULE + ")");
        }
    }

    private static void timedOut(Map<String, Object> result, Map<String, Object> found) {
        if (Boolean.TRUE.equals(found.get("timedOut"))) {
            result.put("timedOut", "stopped after " + SEARCH_TIMEOUT.getSeconds() + " s with what was found so far; "
                    + "narrow the path or the glob");
        }
    }

    private String display(String argument) {
        String relative = files.relative(argument);
        return relative.isEmpty() ? "." : relative;
    }
}
