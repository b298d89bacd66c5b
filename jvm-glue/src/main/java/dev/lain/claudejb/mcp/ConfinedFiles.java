package dev.lain.claudejb.mcp;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CancellationException;

/**
 * A project's files, for tools: every path is opened beneath the project root's descriptor
 * in native code ({@code openat2(RESOLVE_BENEATH)} on Linux, an {@code O_NOFOLLOW} walk on
 * the other Unixes), so a symbolic link swapped in cannot lead out of the project, a FIFO or
 * a device is refused without blocking, and content is read through the descriptor that was
 * checked. Search runs in native code with ripgrep's libraries: Rust regex syntax (linear
 * time, no look-around or backreferences), {@code .gitignore} honoured, bounded by a timeout
 * and by the call's cancellation.
 *
 * <p>The credential rule holds on every file: by name ({@code .env}, {@code .aws/},
 * {@code id_rsa}, {@code *.pem}, …) and by content (private keys, GitHub, AWS, Slack, OpenAI,
 * Google and other token formats, URLs with a password). {@code readLines} refuses such a
 * file, {@code searchText} and {@code findFiles} skip it and count it in
 * {@code filesWithheld} — unless the call's Security Guard answered
 * {@link Verdict#allowExplicitly()} ({@link ToolCallContext#explicitlyAllowed()}).
 * {@code listDirectory} shows names only, and shows them all.
 *
 * <p>Paths are relative to the root, {@code /}-separated; {@code ..} and absolute paths are
 * refused ({@link #relative} turns an absolute path inside the root into one). Results are
 * JSON values as maps (numbers are {@link java.math.BigDecimal}). Refusals are
 * {@link FileAccessException}s whose message is meant for the model. Thread-safe.
 */
public final class ConfinedFiles implements AutoCloseable {
    private final long handle;
    private final Path root;
    private volatile boolean closed;

    private ConfinedFiles(long handle) {
        this.handle = handle;
        this.root = Paths.get(Native.filesRoot(handle));
    }

    /** Opens the project at {@code root} (an existing directory; its own path is trusted). */
    public static ConfinedFiles open(Path root) {
        return new ConfinedFiles(Native.filesOpen(root.toString(), false));
    }

    /**
     * Like {@link #open}, but with the portable {@code openat(O_NOFOLLOW)} walk the Unixes
     * without {@code openat2} use, also on Linux (to test both).
     */
    public static ConfinedFiles openWithPortableWalk(Path root) {
        return new ConfinedFiles(Native.filesOpen(root.toString(), true));
    }

    /** The root, canonical. */
    public Path root() {
        return root;
    }

    /**
     * {@code path} relative to the root with {@code /} separators ({@code ""} for the root):
     * a relative path as it is, an absolute one only if it lies lexically inside the root.
     */
    public String relative(String path) {
        if (path == null || path.isEmpty()) {
            return "";
        }
        Path given = Paths.get(path);
        if (!given.isAbsolute()) {
            return path;
        }
        Path normal = given.normalize();
        if (!normal.startsWith(root)) {
            throw new FileAccessException("`" + path + "` is outside the project " + root);
        }
        return root.relativize(normal).toString().replace('\\', '/');
    }

    /** The limits of one read; 0 keeps the native default (32 MiB, 256 KiB, 200 KiB). */
    public static final class ReadLimits {
        long maxFileBytes;
        long maxWholeBytes;
        long maxContentBytes;

        /** Larger files are never read. */
        public ReadLimits maxFileBytes(long bytes) {
            this.maxFileBytes = bytes;
            return this;
        }

        /** Larger files are read only in line ranges. */
        public ReadLimits maxWholeBytes(long bytes) {
            this.maxWholeBytes = bytes;
            return this;
        }

        /** The most text one answer holds; the rest is left for the next range. */
        public ReadLimits maxContentBytes(long bytes) {
            this.maxContentBytes = bytes;
            return this;
        }
    }

    /**
     * Reads a UTF-8 text file, whole or lines {@code startLine..endLine} (1-based, inclusive;
     * {@code null}: from the first, to the last): {@code {totalLines, startLine, endLine,
     * truncated, content}}. Credentials are withheld unless {@code context} was explicitly
     * allowed ({@code context} may be {@code null}: withheld).
     */
    public Map<String, Object> readLines(ToolCallContext context, String path, Integer startLine, Integer endLine,
                                         ReadLimits limits) {
        ReadLimits given = limits == null ? new ReadLimits() : limits;
        return parse(Native.filesReadLines(handle(), relative(path), startLine == null ? 0 : startLine,
                endLine == null ? 0 : endLine, given.maxFileBytes, given.maxWholeBytes, given.maxContentBytes,
                explicitlyAllowed(context)));
    }

    /** The entries of a directory by name, at most {@code maxEntries}: {@code {entries: [{name, type, size, modifiedMillis}], total}}. */
    public Map<String, Object> listDirectory(String path, int maxEntries) {
        return parse(Native.filesListDirectory(handle(), relative(path), maxEntries));
    }

    /** What is at {@code path}, a link not followed: {@code {name, type, size, modifiedMillis}}; type is file, directory, symlink or other. */
    public Map<String, Object> stat(String path) {
        return parse(Native.filesStat(handle(), relative(path)));
    }

    /** A {@link #searchText} request. */
    public static final class Search {
        final Map<String, Object> fields = new LinkedHashMap<>();

        /** {@code pattern}: a Rust regex, matched line by line. */
        public Search(String pattern) {
            fields.put("pattern", Objects.requireNonNull(pattern, "pattern"));
        }

        public Search ignoreCase(boolean ignoreCase) {
            fields.put("ignoreCase", ignoreCase);
            return this;
        }

        /** Only files matching this glob (without {@code /}: the name; with: the path from the root). */
        public Search glob(String glob) {
            fields.put("glob", glob);
            return this;
        }

        /** Only under this directory, or in this file. */
        public Search path(String path) {
            fields.put("path", path);
            return this;
        }

        public Search maxMatches(int max) {
            fields.put("maxMatches", max);
            return this;
        }

        /** Larger files are skipped (default 8 MiB). */
        public Search maxFileBytes(long bytes) {
            fields.put("maxFileBytes", bytes);
            return this;
        }

        /** Past it, the search answers with what it found, {@code timedOut} set. */
        public Search timeout(Duration timeout) {
            fields.put("timeoutMillis", timeout.toMillis());
            return this;
        }
    }

    /** A {@link #findFiles} request. */
    public static final class Find {
        final Map<String, Object> fields = new LinkedHashMap<>();

        /** {@code glob}: without {@code /} it matches names anywhere, with one the path from the root. */
        public Find(String glob) {
            fields.put("glob", Objects.requireNonNull(glob, "glob"));
        }

        public Find path(String path) {
            fields.put("path", path);
            return this;
        }

        public Find maxResults(int max) {
            fields.put("maxResults", max);
            return this;
        }

        public Find timeout(Duration timeout) {
            fields.put("timeoutMillis", timeout.toMillis());
            return this;
        }
    }

    /**
     * Searches: {@code {matches: [{path, line, text}], filesSearched, filesSkipped,
     * filesWithheld, truncated, timedOut}}. Runs on this thread until done; cancelling
     * {@code context} (or its deadline) stops it with a {@link CancellationException}.
     */
    public Map<String, Object> searchText(ToolCallContext context, Search search) {
        Map<String, Object> fields = new LinkedHashMap<>(search.fields);
        fields.put("path", relative((String) fields.get("path")));
        fields.put("allowCredentials", explicitlyAllowed(context));
        return cancellable(context, cancel -> Native.filesSearchText(handle(), cancel, Json.write(fields)));
    }

    /** Finds files: {@code {files, filesWithheld, truncated, timedOut}}; cancelled like {@link #searchText}. */
    public Map<String, Object> findFiles(ToolCallContext context, Find find) {
        Map<String, Object> fields = new LinkedHashMap<>(find.fields);
        fields.put("path", relative((String) fields.get("path")));
        fields.put("allowCredentials", explicitlyAllowed(context));
        return cancellable(context, cancel -> Native.filesFindFiles(handle(), cancel, Json.write(fields)));
    }

    private interface NativeSearch {
        String run(long cancel);
    }

    /** Runs a search with a native cancellation flag that the context's cancellation raises. */
    private static Map<String, Object> cancellable(ToolCallContext context, NativeSearch search) {
        long cancel = Native.filesNewCancel();
        try {
            if (context != null) {
                // Freed below; raising a freed flag is a no-op, so a late cancellation is harmless.
                context.onCancel(() -> Native.filesCancel(cancel));
            }
            try {
                return parse(search.run(cancel));
            } catch (FileAccessException e) {
                if (context != null && context.isCancelled()) {
                    throw new CancellationException("the call was cancelled");
                }
                throw e;
            }
        } finally {
            Native.filesFreeCancel(cancel);
        }
    }

    private static boolean explicitlyAllowed(ToolCallContext context) {
        return context != null && context.explicitlyAllowed();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> parse(String json) {
        // Written by the native library: small and well-formed.
        return (Map<String, Object>) Json.parse(json, DecodeBudget.UNLIMITED);
    }

    private long handle() {
        if (closed) {
            throw new IllegalStateException("these project files were closed");
        }
        return handle;
    }

    /** Closes the root's descriptor; searches still running finish first. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            Native.filesClose(handle);
        }
    }
}
