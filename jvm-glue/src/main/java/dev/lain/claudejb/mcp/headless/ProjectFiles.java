package dev.lain.claudejb.mcp.headless;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The project's files, for {@code find_files} and {@code search_text}: in a git repository the
 * files git knows or would add (tracked and untracked, not ignored: {@code git ls-files}),
 * otherwise a walk that follows no links. {@code .git} is never included.
 */
final class ProjectFiles {
    /** How many files a listing goes through at most. */
    static final int MAX_FILES = 200_000;

    private final ProjectPaths paths;
    private final Git git;

    ProjectFiles(ProjectPaths paths, Git git) {
        this.paths = paths;
        this.git = git;
    }

    /** Files under {@code base} (a canonical directory or file inside the project), as paths relative to the root. */
    List<String> under(Path base) throws IOException, InterruptedException, ToolFailure {
        if (Files.isRegularFile(base)) {
            List<String> one = new ArrayList<>();
            one.add(paths.relative(base));
            return one;
        }
        if (git != null) {
            return git.listFiles(paths.relative(base));
        }
        return walk(base);
    }

    private List<String> walk(Path base) throws IOException, InterruptedException {
        List<String> files = new ArrayList<>();
        Files.walkFileTree(base, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                if (Thread.currentThread().isInterrupted()) {
                    return FileVisitResult.TERMINATE;
                }
                return dir.getFileName() != null && dir.getFileName().toString().equals(".git") && !dir.equals(base)
                        ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile() || attrs.isSymbolicLink()) {
                    files.add(paths.relative(file));
                }
                return files.size() >= MAX_FILES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE; // unreadable: skipped
            }
        });
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        return files;
    }

    /**
     * A filter for a glob over relative paths: a glob without '/' matches the file name
     * anywhere ({@code *.rs}); one with '/' matches the whole relative path, where a leading
     * {@code **}{@code /} may also match nothing ({@code **}{@code /*.rs} finds {@code main.rs}).
     */
    static Predicate<String> glob(String glob) throws ToolFailure {
        if (glob == null || glob.isEmpty()) {
            return path -> true;
        }
        PathMatcher matcher;
        PathMatcher shorter;
        try {
            matcher = FileSystems.getDefault().getPathMatcher("glob:" + glob);
            shorter = glob.startsWith("**/") ? FileSystems.getDefault().getPathMatcher("glob:" + glob.substring(3)) : null;
        } catch (IllegalArgumentException e) {
            throw new ToolFailure("`glob` is not a valid glob: " + e.getMessage());
        }
        boolean byName = !glob.contains("/");
        return relative -> {
            Path path = Path.of(relative);
            if (byName) {
                Path name = path.getFileName();
                return name != null && matcher.matches(name);
            }
            return matcher.matches(path) || (shorter != null && shorter.matches(path));
        };
    }

    /** Whether the first bytes of {@code file} look binary (a NUL byte). */
    static boolean looksBinary(Path file) throws IOException {
        byte[] start = new byte[8192];
        int length;
        try (InputStream in = Files.newInputStream(file)) {
            length = in.readNBytes(start, 0, start.length);
        }
        for (int i = 0; i < length; i++) {
            if (start[i] == 0) {
                return true;
            }
        }
        return false;
    }

    /** The text of {@code bytes} as strict UTF-8, or null when they are not UTF-8. */
    static String utf8OrNull(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    static Set<String> dedupe(List<String> files) {
        return new LinkedHashSet<>(files);
    }
}
