package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.Test;

public class NativeLoaderTest {
    @Test
    public void extractionIsNamedByContentHashAndReused() throws Exception {
        Path cache = Files.createTempDirectory("native-cache");
        try {
            byte[] library = "not really a library".getBytes(StandardCharsets.UTF_8);
            Path first = NativeLoader.extract(library, "libide_mcp_jni.so", cache);
            assertEquals(NativeLoader.sha256(library), first.getParent().getFileName().toString());
            assertArrayEquals(library, Files.readAllBytes(first));
            long modified = Files.getLastModifiedTime(first).toMillis();
            Path second = NativeLoader.extract(library, "libide_mcp_jni.so", cache);
            assertEquals(first, second);
            assertEquals(modified, Files.getLastModifiedTime(second).toMillis());
            // A damaged file is replaced, not loaded.
            Files.write(first, "damaged".getBytes(StandardCharsets.UTF_8));
            assertArrayEquals(library, Files.readAllBytes(NativeLoader.extract(library, "libide_mcp_jni.so", cache)));
            try (java.util.stream.Stream<Path> files = Files.list(first.getParent())) {
                assertEquals("no partial files are left", 1, files.count());
            }
        } finally {
            TestDomains.deleteRecursively(cache);
        }
    }

    @Test
    public void theResourcePathNamesTheOsAndArch() {
        String path = NativeLoader.resourcePath();
        assertTrue(path, path.startsWith("/native/" + NativeLoader.os() + "-" + NativeLoader.arch() + "/"));
        assertTrue(path, path.endsWith(NativeLoader.libraryFileName(NativeLoader.os())));
    }
}
