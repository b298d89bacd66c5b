package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.Test;

/**
 * The {@code native} methods declared in {@link Native} and the
 * {@code Java_dev_lain_claudejb_mcp_Native_*} symbols the loaded library exports are the same
 * set: a method declared without an implementation (an {@code UnsatisfiedLinkError} at its
 * first call) or an implementation nothing declares fails here. The tests load the test build
 * ({@code --features testing}), so the {@code TESTING_*} methods are in both.
 */
public class NativeSymbolsTest {
    private static final String PREFIX = "Java_dev_lain_claudejb_mcp_Native_";

    @Test
    public void nativeDeclaresExactlyWhatTheLibraryExports() throws Exception {
        Set<String> declared = new TreeSet<>();
        for (Method method : Native.class.getDeclaredMethods()) {
            if (Modifier.isNative(method.getModifiers())) {
                declared.add(method.getName());
            }
        }
        assertEquals("the library exports the symbols that Native declares", declared, exportedMethods());
    }

    /** The exported {@code Native} methods, their JNI names unmangled ({@code _1} is {@code _}). */
    private static Set<String> exportedMethods() throws Exception {
        String library = System.getProperty(NativeLoader.LIBRARY_PROPERTY);
        assertTrue("-D" + NativeLoader.LIBRARY_PROPERTY + " must name the library the tests load (build.gradle sets it)",
                library != null && new File(library).isFile());
        boolean macos = NativeLoader.os().equals("darwin");
        List<String> command = new ArrayList<>(macos
                ? List.of("nm", "-gU", library)
                : List.of("nm", "-D", "--defined-only", library));
        Process nm = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(nm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(String.join(" ", command) + " failed: " + output, 0, nm.waitFor());
        Set<String> exported = new TreeSet<>();
        for (String line : output.split("\n")) {
            String[] fields = line.trim().split("\\s+");
            String symbol = fields[fields.length - 1];
            if (macos && symbol.startsWith("_")) {
                symbol = symbol.substring(1);
            }
            if (symbol.startsWith(PREFIX)) {
                String name = symbol.substring(PREFIX.length());
                // Overloaded methods would carry "__" and a signature; Native has none.
                assertTrue(symbol + " is overloaded or oddly mangled", !name.contains("__"));
                exported.add(name.replace("_1", "_"));
            }
        }
        return exported;
    }
}
