package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
            TestSupport.deleteRecursively(cache);
        }
    }

    @Test
    public void everyDesktopJvmMapsToItsFolder() {
        assertEquals("linux-x86_64", NativeLoader.platformFolder("Linux", "amd64"));
        assertEquals("linux-aarch64", NativeLoader.platformFolder("Linux", "aarch64"));
        assertEquals("darwin-x86_64", NativeLoader.platformFolder("Mac OS X", "x86_64"));
        assertEquals("darwin-aarch64", NativeLoader.platformFolder("Mac OS X", "aarch64"));
        assertEquals("windows-x86_64", NativeLoader.platformFolder("Windows 11", "amd64"));
        assertEquals("windows-x86_64", NativeLoader.platformFolder("Windows Server 2022", "x86_64"));
        assertEquals("/native/darwin-aarch64/libide_mcp_jni.dylib", NativeLoader.resourcePath("darwin-aarch64"));
        assertEquals("/native/windows-x86_64/ide_mcp_jni.dll", NativeLoader.resourcePath("windows-x86_64"));
        assertEquals("/native/linux-aarch64/libide_mcp_jni.so", NativeLoader.resourcePath("linux-aarch64"));
    }

    @Test
    public void aMissingLibrarySaysWhichFolderItLookedForAndWhichExist() {
        String message = NativeLoader.missingLibraryMessage("Windows 11", "amd64",
                List.of("linux-x86_64", "darwin-aarch64"));
        assertTrue(message, message.contains("native/windows-x86_64/ide_mcp_jni.dll"));
        assertTrue(message, message.contains("native/linux-x86_64/, native/darwin-aarch64/"));
        assertTrue(message, message.contains("os.name Windows 11, os.arch amd64"));

        String unknown = NativeLoader.missingLibraryMessage("FreeBSD", "riscv64", List.of());
        assertTrue(unknown, unknown.contains("native/freebsd-riscv64/"));
        assertTrue(unknown, unknown.contains("no native folder at all"));
        assertTrue(unknown, unknown.contains("built for [linux-x86_64, linux-aarch64, darwin-x86_64, darwin-aarch64, windows-x86_64] only"));
    }

    @Test
    public void theFoldersInTheJarAreFoundOnTheClassPath() throws Exception {
        Path root = Files.createTempDirectory("native-folders");
        try {
            for (String folder : List.of("darwin-x86_64", "windows-x86_64")) {
                Path library = root.resolve(NativeLoader.resourcePath(folder).substring(1));
                Files.createDirectories(library.getParent());
                Files.write(library, new byte[] {1});
            }
            try (URLClassLoader loader = new URLClassLoader(new URL[] {root.toUri().toURL()}, null)) {
                assertEquals(List.of("darwin-x86_64", "windows-x86_64"),
                        NativeLoader.foldersWith(resource -> loader.getResource(resource.substring(1)) != null));
            }
        } finally {
            TestSupport.deleteRecursively(root);
        }
    }

    @Test
    public void theResourcePathNamesTheOsAndArch() {
        String path = NativeLoader.resourcePath();
        assertTrue(path, path.startsWith("/native/" + NativeLoader.os() + "-" + NativeLoader.arch() + "/"));
        assertTrue(path, path.endsWith(NativeLoader.libraryFileName(NativeLoader.os())));
    }

    /**
     * An IDE gives every plugin its own class loader, and the JVM ties a library file to the
     * first class loader that loads it: a second copy of the plugin must still get a working
     * library (a private copy of the file).
     */
    @Test
    public void aSecondClassLoaderGetsAWorkingPrivateCopy() throws Exception {
        assertEquals(
                Contract.SPLIT_MODE_MESSAGE,
                Native.splitModeMessage());
        String[] classDirectories = System.getProperty("ide.mcp.test.classpath").split(File.pathSeparator);
        URL[] urls = new URL[classDirectories.length];
        for (int i = 0; i < classDirectories.length; i++) {
            urls[i] = new File(classDirectories[i]).toURI().toURL();
        }
        try (URLClassLoader pluginCopy = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            Class<?> nativeOfTheCopy = Class.forName("dev.lain.claudejb.mcp.Native", true, pluginCopy);
            assertTrue(nativeOfTheCopy.getClassLoader() == pluginCopy);
            Method message = nativeOfTheCopy.getDeclaredMethod("splitModeMessage");
            message.setAccessible(true);
            assertEquals(
                    Contract.SPLIT_MODE_MESSAGE,
                    message.invoke(null));
        }
    }

    /** With no library for the platform, the error names the OS, the arch and what was looked for. */
    @Test
    public void aMissingLibraryIsReportedWithOsArchAndPath() throws Exception {
        String classPath = TestSupport.mainClasspath() + File.pathSeparator
                + new File(LoaderProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Process probe = new ProcessBuilder(TestSupport.javaCommand(classPath,
                        List.of("-D" + NativeLoader.CACHE_PROPERTY + "=" + Files.createTempDirectory("native-cache")),
                        LoaderProbe.class.getName()))
                .redirectErrorStream(true)
                .start();
        String output = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, probe.waitFor());
        assertTrue(output, output.startsWith("java.lang.UnsatisfiedLinkError"));
        assertTrue(output, output.contains("os.name " + System.getProperty("os.name")));
        assertTrue(output, output.contains("os.arch " + System.getProperty("os.arch")));
        assertTrue(output, output.contains("(folder native/" + NativeLoader.os() + "-" + NativeLoader.arch() + "/)"));
        assertTrue(output, output.contains(NativeLoader.resourcePath()));
        assertTrue(output, output.contains("the jar has no native folder at all"));
        assertTrue(output, output.contains(NativeLoader.LIBRARY_PROPERTY));
    }
}
