package dev.lain.claudejb.mcp.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The headless host's {@code search_text} as it was in Java before it moved to native code
 * (java.util.regex line by line, a {@code Files.walkFileTree} walk outside git, every file
 * read whole and decoded as strict UTF-8), kept only as the benchmark's baseline:
 * {@code ide-mcp-bench search} runs it beside the native search and {@code rg} on one tree.
 *
 * <pre>java -cp jvm-glue-bench.jar dev.lain.claudejb.mcp.bench.JavaSearchBaseline root pattern maxResults runs</pre>
 *
 * prints one line per run: {@code <matches> <nanoseconds>}.
 */
public final class JavaSearchBaseline {
    static final long MAX_SEARCH_FILE_BYTES = 8L * 1024 * 1024;
    static final int MAX_MATCH_LINE_CHARS = 300;
    static final int MAX_FILES = 200_000;

    private JavaSearchBaseline() {
    }

    public static void main(String[] args) throws IOException {
        Path root = Paths.get(args[0]).toRealPath();
        Pattern pattern = Pattern.compile(args[1]);
        int max = Integer.parseInt(args[2]);
        int runs = Integer.parseInt(args[3]);
        for (int run = 0; run < runs; run++) {
            long started = System.nanoTime();
            int matches = search(root, pattern, max).size();
            System.out.println(matches + " " + (System.nanoTime() - started));
        }
    }

    /** The matching lines as {@code path:line:text}, at most {@code max}. */
    static List<String> search(Path root, Pattern pattern, int max) throws IOException {
        List<String> matches = new ArrayList<>();
        outer:
        for (String relative : new LinkedHashSet<>(walk(root))) {
            String text = readSearchable(root, root.resolve(relative));
            if (text == null) {
                continue;
            }
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
                String line = text.substring(start, end);
                if (line.endsWith("\r")) {
                    line = line.substring(0, line.length() - 1);
                }
                Matcher matcher = pattern.matcher(line);
                if (matcher.find()) {
                    if (matches.size() >= max) {
                        break outer;
                    }
                    matches.add(relative + ":" + lineNumber + ":" + excerpt(line, matcher.start()));
                }
                start = end + 1;
            }
        }
        return matches;
    }

    private static List<String> walk(Path base) throws IOException {
        List<String> files = new ArrayList<>();
        Files.walkFileTree(base, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                return dir.getFileName() != null && dir.getFileName().toString().equals(".git") && !dir.equals(base)
                        ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile() || attrs.isSymbolicLink()) {
                    files.add(base.relativize(file).toString());
                }
                return files.size() >= MAX_FILES ? FileVisitResult.TERMINATE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) {
                return FileVisitResult.CONTINUE;
            }
        });
        return files;
    }

    private static String readSearchable(Path root, Path file) {
        try {
            Path real = file.toRealPath();
            if (!real.startsWith(root) || !Files.isRegularFile(real) || Files.size(real) > MAX_SEARCH_FILE_BYTES) {
                return null;
            }
            byte[] bytes = Files.readAllBytes(real);
            for (int i = 0, n = Math.min(bytes.length, 8192); i < n; i++) {
                if (bytes[i] == 0) {
                    return null;
                }
            }
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
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
