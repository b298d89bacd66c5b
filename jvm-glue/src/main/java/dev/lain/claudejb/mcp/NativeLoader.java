package dev.lain.claudejb.mcp;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * Finds and loads the native library.
 *
 * <ol>
 *   <li>The system property {@value #LIBRARY_PROPERTY}, when set, names the library file to load.</li>
 *   <li>Otherwise the library travels in the jar under {@code /native/<os>-<arch>/}, one folder
 *       per platform of {@link #PLATFORM_FOLDERS} (one jar serves every desktop). It is
 *       extracted to a cache directory named by its SHA-256 (written to a temporary file, then
 *       moved into place atomically, so a concurrent JVM never loads half a file) and loaded
 *       from there.</li>
 *   <li>A JVM loads one file into one class loader only. When another class loader (another
 *       copy of the plugin) already loaded it, a private copy with a unique name is loaded
 *       instead.</li>
 * </ol>
 */
final class NativeLoader {
    static final String LIBRARY_PROPERTY = "ide.mcp.native.library";
    static final String CACHE_PROPERTY = "ide.mcp.native.cache";
    static final String LIBRARY_NAME = "ide_mcp_jni";

    /**
     * Every {@code native/<os>-<arch>/} folder a jar may carry, as {@code gradle/native.gradle}
     * names them: Linux and macOS (darwin) on x86_64 and aarch64, Windows on x86_64.
     */
    static final List<String> PLATFORM_FOLDERS = List.of(
            "linux-x86_64", "linux-aarch64", "darwin-x86_64", "darwin-aarch64", "windows-x86_64");

    private static boolean loaded;

    private NativeLoader() {
    }

    static synchronized void load() {
        if (loaded) {
            return;
        }
        String override = System.getProperty(LIBRARY_PROPERTY);
        if (override != null && !override.isEmpty()) {
            Path library = Paths.get(override).toAbsolutePath();
            if (!Files.isRegularFile(library)) {
                throw new UnsatisfiedLinkError("-D" + LIBRARY_PROPERTY + " names " + library + ", which is not a file");
            }
            loadFile(library);
        } else {
            loadFile(extractFromJar());
        }
        loaded = true;
    }

    /** This JVM's OS, as the folder names it. */
    static String os() {
        return os(System.getProperty("os.name", ""));
    }

    /** The folder name of the OS a JVM reports as {@code os.name}. */
    static String os(String osName) {
        String name = osName.toLowerCase(Locale.ROOT);
        if (name.startsWith("linux")) {
            return "linux";
        }
        if (name.startsWith("mac") || name.startsWith("darwin")) {
            return "darwin";
        }
        if (name.startsWith("windows")) {
            return "windows";
        }
        return name.replaceAll("[^a-z0-9]", "");
    }

    /** This JVM's architecture, as the folder names it. */
    static String arch() {
        return arch(System.getProperty("os.arch", ""));
    }

    /** The folder name of the architecture a JVM reports as {@code os.arch}. */
    static String arch(String osArch) {
        String arch = osArch.toLowerCase(Locale.ROOT);
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
                return "x86_64";
            case "aarch64":
            case "arm64":
                return "aarch64";
            default:
                return arch.replaceAll("[^a-z0-9_]", "");
        }
    }

    /** The folder of the platform a JVM reports as {@code os.name} and {@code os.arch}. */
    static String platformFolder(String osName, String osArch) {
        return os(osName) + "-" + arch(osArch);
    }

    static String libraryFileName(String os) {
        switch (os) {
            case "darwin": return "lib" + LIBRARY_NAME + ".dylib";
            case "windows": return LIBRARY_NAME + ".dll";
            default: return "lib" + LIBRARY_NAME + ".so";
        }
    }

    /** Where the library of {@code folder} (such as {@code darwin-aarch64}) is in the jar. */
    static String resourcePath(String folder) {
        String os = folder.substring(0, Math.max(0, folder.indexOf('-')));
        return "/native/" + folder + "/" + libraryFileName(os);
    }

    static String resourcePath() {
        return resourcePath(os() + "-" + arch());
    }

    /** The platform folders of {@link #PLATFORM_FOLDERS} whose library this jar carries. */
    static List<String> foldersInJar() {
        return foldersWith(resource -> NativeLoader.class.getResource(resource) != null);
    }

    /** The platform folders whose library resource {@code exists}. */
    static List<String> foldersWith(Predicate<String> exists) {
        List<String> present = new ArrayList<>();
        for (String folder : PLATFORM_FOLDERS) {
            if (exists.test(resourcePath(folder))) {
                present.add(folder);
            }
        }
        return present;
    }

    /** What to say when the jar has no library for {@code wanted}. */
    static String missingLibraryMessage(String osName, String osArch, List<String> present) {
        String wanted = platformFolder(osName, osArch);
        return "the ide-mcp native library is not in this jar for this platform (os.name " + osName
                + ", os.arch " + osArch + "): looked for " + resourcePath(wanted) + " (folder native/"
                + wanted + "/); the jar has " + (present.isEmpty() ? "no native folder at all"
                : "native/" + String.join("/, native/", present) + "/")
                + (PLATFORM_FOLDERS.contains(wanted) ? "" : "; ide-mcp is built for " + PLATFORM_FOLDERS + " only")
                + " (set -D" + LIBRARY_PROPERTY + "=/path/to/" + libraryFileName(os(osName))
                + " to use a library file)";
    }

    private static Path extractFromJar() {
        String resource = resourcePath();
        byte[] bytes;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError(missingLibraryMessage(System.getProperty("os.name", ""),
                        System.getProperty("os.arch", ""), foldersInJar()));
            }
            bytes = in.readAllBytes();
        } catch (IOException e) {
            throw linkError("could not read " + resource + " from the jar", e);
        }
        try {
            return extract(bytes, libraryFileName(os()), cacheDirectory());
        } catch (IOException e) {
            throw linkError("could not extract " + resource + " to " + cacheDirectory(), e);
        }
    }

    /**
     * Puts {@code bytes} at {@code <cache>/<sha256>/<fileName>} unless an identical file is
     * already there, and returns that path.
     */
    static Path extract(byte[] bytes, String fileName, Path cache) throws IOException {
        String hash = sha256(bytes);
        Path directory = cache.resolve(hash);
        Path target = directory.resolve(fileName);
        if (Files.isRegularFile(target) && Arrays.equals(sha256Bytes(Files.readAllBytes(target)), sha256Bytes(bytes))) {
            return target;
        }
        createPrivateDirectories(directory);
        Path temporary = Files.createTempFile(directory, fileName, ".partial");
        try {
            Files.write(temporary, bytes);
            try {
                Files.move(temporary, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temporary, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temporary);
        }
        return target;
    }

    private static void loadFile(Path library) {
        try {
            System.load(library.toString());
        } catch (UnsatisfiedLinkError e) {
            String message = String.valueOf(e.getMessage());
            if (!message.contains("already loaded in another classloader")) {
                throw e;
            }
            System.load(privateCopy(library).toString());
        }
    }

    /** A copy only this class loader loads: the JVM ties a library file to one class loader. */
    private static Path privateCopy(Path library) {
        try {
            Path copy = Files.createTempFile(library.getParent(), "private-", "-" + library.getFileName());
            Files.copy(library, copy, StandardCopyOption.REPLACE_EXISTING);
            copy.toFile().deleteOnExit();
            return copy;
        } catch (IOException e) {
            throw linkError("could not make a private copy of " + library
                    + " (another class loader already loaded it)", e);
        }
    }

    static Path cacheDirectory() {
        String configured = System.getProperty(CACHE_PROPERTY);
        if (configured != null && !configured.isEmpty()) {
            return Paths.get(configured);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isEmpty()) {
            return Paths.get(xdg, "ide-mcp", "native");
        }
        String home = System.getProperty("user.home");
        if (home != null && !home.isEmpty() && Files.isWritable(Paths.get(home))) {
            return Paths.get(home, ".cache", "ide-mcp", "native");
        }
        return Paths.get(System.getProperty("java.io.tmpdir"), "ide-mcp-native-" + System.getProperty("user.name"));
    }

    private static void createPrivateDirectories(Path directory) throws IOException {
        try {
            Files.createDirectories(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (UnsupportedOperationException e) {
            Files.createDirectories(directory);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(directory)) {
                throw e;
            }
        }
    }

    static String sha256(byte[] bytes) {
        StringBuilder hex = new StringBuilder();
        for (byte b : sha256Bytes(bytes)) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }

    private static byte[] sha256Bytes(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
        UnsatisfiedLinkError error = new UnsatisfiedLinkError(message + ": " + cause);
        error.initCause(cause);
        return error;
    }
}
