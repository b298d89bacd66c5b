package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.Test;

/**
 * The Java TOON codec against the conformance fixtures of the TOON specification (set v4.1.1,
 * with the v4.4 amendments the fixtures' README lists), and its own edge cases.
 */
public class ToonTest {
    /**
     * Where the fixtures are: {@code -Dide.mcp.toon.fixtures} (the build sets it), else the copy
     * vendored at {@code tests/toon-fixtures} of the repository, seen from {@code jvm-glue/} or
     * from the root. The copy is part of the repository, so a missing one fails the test.
     */
    private static Path fixtures() {
        String configured = System.getProperty("ide.mcp.toon.fixtures");
        if (configured != null) {
            return Paths.get(configured);
        }
        for (Path candidate : new Path[] {
                Paths.get("../tests/toon-fixtures/spec-v4.1.1/tests/fixtures"),
                Paths.get("tests/toon-fixtures/spec-v4.1.1/tests/fixtures")}) {
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        throw new AssertionError("the TOON fixtures are missing: tests/toon-fixtures of the repository");
    }

    /** v4.4 dropped a non-strict recovery that v4.1.1 expected: these now expect an error. */
    private static final List<String> V44_ERRORS = List.of(
            "delimiters.json#28", "objects-keyed.json#18", "objects.json#23", "objects.json#24",
            "objects.json#25", "objects.json#26", "objects.json#53");

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> cases(Path file) throws IOException {
        Map<String, Object> suite = (Map<String, Object>) Json.parse(
                new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
        return (List<Map<String, Object>>) (List<?>) suite.get("tests");
    }

    private static List<Path> files(Path directory) throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(directory, "*.json")) {
            stream.forEach(files::add);
        }
        files.sort(null);
        return files;
    }

    @Test
    @SuppressWarnings("unchecked")
    public void everyDecodeFixture() throws IOException {
        Path root = fixtures();
        int run = 0;
        List<String> failures = new ArrayList<>();
        for (Path file : files(root.resolve("decode"))) {
            List<Map<String, Object>> cases = cases(file);
            for (int index = 0; index < cases.size(); index++) {
                Map<String, Object> test = cases.get(index);
                String name = file.getFileName() + "#" + index;
                Map<String, Object> options = (Map<String, Object>) test.getOrDefault("options", Map.of());
                int indent = options.containsKey("indentSize") ? ((BigDecimal) options.get("indentSize")).intValueExact() : 2;
                boolean strict = !Boolean.FALSE.equals(options.get("strict"));
                boolean shouldError = Boolean.TRUE.equals(test.get("shouldError")) || V44_ERRORS.contains(name);
                run++;
                try {
                    Object decoded = Toon.decode((String) test.get("input"), indent, strict);
                    if (shouldError) {
                        failures.add(name + ": expected an error, decoded " + Json.write(decoded));
                    } else if (!same(test.get("expected"), decoded)) {
                        failures.add(name + ": expected " + Json.write(test.get("expected")) + ", got " + Json.write(decoded));
                    }
                } catch (Toon.DecodeException e) {
                    if (!shouldError) {
                        failures.add(name + ": " + e.getMessage());
                    }
                }
            }
        }
        assertTrue(failures.size() + " of " + run + " decode fixtures failed:\n" + String.join("\n", failures),
                failures.isEmpty());
        assertEquals("every decode fixture runs", 359, run);
    }

    @Test
    @SuppressWarnings("unchecked")
    public void everyEncodeFixtureWithDefaultOptions() throws IOException {
        Path root = fixtures();
        int run = 0;
        int skipped = 0;
        List<String> failures = new ArrayList<>();
        for (Path file : files(root.resolve("encode"))) {
            List<Map<String, Object>> cases = cases(file);
            for (int index = 0; index < cases.size(); index++) {
                Map<String, Object> test = cases.get(index);
                String name = file.getFileName() + "#" + index;
                Map<String, Object> options = (Map<String, Object>) test.get("options");
                if (options != null && !options.isEmpty()) {
                    skipped++; // a delimiter or indent other than the default: not what the wire uses
                    continue;
                }
                run++;
                String encoded = Toon.encode(test.get("input"));
                if (!encoded.equals(test.get("expected"))) {
                    failures.add(name + ": expected\n" + test.get("expected") + "\ngot\n" + encoded);
                    continue;
                }
                // And back: the decoder reads what the encoder wrote as the same value (a table
                // lists every row's fields in the first row's order).
                if (!same(test.get("input"), Toon.decode(encoded), false)) {
                    failures.add(name + ": does not round-trip: " + encoded);
                }
            }
        }
        assertTrue(failures.size() + " of " + run + " encode fixtures failed:\n" + String.join("\n", failures),
                failures.isEmpty());
        assertEquals("encode fixtures with default options", 179 - skipped, run);
        System.out.println("TOON fixtures: 359 decode, " + run + " encode (" + skipped + " with other options skipped)");
    }

    /** JSON equality with ordered keys and numbers compared by value. */
    static boolean same(Object expected, Object actual) {
        return same(expected, actual, true);
    }

    static boolean same(Object expected, Object actual, boolean ordered) {
        if (expected == null || actual == null) {
            return expected == actual;
        }
        if (expected instanceof BigDecimal && actual instanceof BigDecimal) {
            return ((BigDecimal) expected).compareTo((BigDecimal) actual) == 0;
        }
        if (expected instanceof Map && actual instanceof Map) {
            Map<?, ?> left = (Map<?, ?>) expected;
            Map<?, ?> right = (Map<?, ?>) actual;
            if (left.size() != right.size()) {
                return false;
            }
            if (!ordered) {
                for (Map.Entry<?, ?> entry : left.entrySet()) {
                    if (!right.containsKey(entry.getKey()) || !same(entry.getValue(), right.get(entry.getKey()), false)) {
                        return false;
                    }
                }
                return true;
            }
            Iterator<? extends Map.Entry<?, ?>> l = left.entrySet().iterator();
            Iterator<? extends Map.Entry<?, ?>> r = right.entrySet().iterator();
            while (l.hasNext()) {
                Map.Entry<?, ?> a = l.next();
                Map.Entry<?, ?> b = r.next();
                if (!a.getKey().equals(b.getKey()) || !same(a.getValue(), b.getValue(), true)) {
                    return false;
                }
            }
            return true;
        }
        if (expected instanceof List && actual instanceof List) {
            List<?> left = (List<?>) expected;
            List<?> right = (List<?>) actual;
            if (left.size() != right.size()) {
                return false;
            }
            for (int i = 0; i < left.size(); i++) {
                if (!same(left.get(i), right.get(i), ordered)) {
                    return false;
                }
            }
            return true;
        }
        return expected.equals(actual);
    }

    @Test
    public void aJsonRpcRequestRoundTrips() {
        String json = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run\","
                + "\"arguments\":{\"tool\":\"read_file\",\"args\":{\"path\":\"src/a b.txt\",\"lines\":[1,2,3],"
                + "\"rows\":[{\"a\":1,\"b\":\"x\"},{\"a\":2,\"b\":\"y,z\"}],\"empty\":{},\"none\":[],"
                + "\"mixed\":[1,{\"k\":true},[null,\"\"]],\"text\":\"line\\nnext \\\"q\\\" \\u0001 \\ud83d\\ude80\"}},"
                + "\"_meta\":{\"" + Contract.TOKEN_META_KEY + "\":\"abc-_123\",\"progressToken\":-1.5e-3}}}";
        Object value = Json.parse(json);
        String toon = Toon.encode(value);
        assertTrue(toon, toon.contains("\"" + Contract.TOKEN_META_KEY + "\": abc-_123"));
        assertTrue(toon, toon.contains("rows[2]{a,b}:"));
        assertTrue(same(value, Toon.decode(toon)));
        assertEquals(Json.write(value), Json.write(Toon.decode(toon)));
    }

    @Test
    public void strictModeRejectsDuplicateKeysAndNonStrictLetsTheLastWin() {
        for (String text : new String[] {"a: 1\na: 2", "o:\n  x: 1\n  x: 2", "t[2]{a,a}:\n  1,2\n  3,4",
                "m[2:]{v}:\n  k: 1\n  k: 2", "items[1]:\n  - a: 1\n    a: 2"}) {
            try {
                Toon.decode(text);
                fail("a duplicate key was accepted: " + text);
            } catch (Toon.DecodeException expected) {
                assertTrue(expected.getMessage(), expected.getMessage().contains("duplicate"));
            }
        }
        assertEquals("{\"a\":2}", Json.write(Toon.decode("a: 1\na: 2", 2, false)));
    }

    @Test
    public void nestingPastTheLimitIsAnErrorNotAStackOverflow() {
        StringBuilder deep = new StringBuilder();
        for (int depth = 0; depth < 200; depth++) {
            deep.append("  ".repeat(depth)).append("k:\n");
        }
        try {
            Toon.decode(deep.toString());
            fail("nesting past the limit was accepted");
        } catch (Toon.DecodeException expected) {
            assertTrue(expected.getMessage(), expected.getMessage().contains("nesting deeper"));
        }
    }

    @Test
    public void numbersAreWrittenInPlainDecimal() {
        Map<String, Object> numbers = new LinkedHashMap<>();
        numbers.put("a", new BigDecimal("1E+3"));
        numbers.put("b", new BigDecimal("-0.0"));
        numbers.put("c", 1.0e-7);
        numbers.put("d", Long.MAX_VALUE);
        numbers.put("e", Double.NaN);
        numbers.put("f", new BigDecimal("2.50"));
        assertEquals("a: 1000\nb: 0\nc: 0.0000001\nd: 9223372036854775807\ne: null\nf: 2.5", Toon.encode(numbers));
    }
}
