package dev.lain.claudejb.mcp.headless;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The project directory, and path arguments confined to it. The library's baseline policy
 * already makes marked path arguments canonical and denies those outside the project roots;
 * this check runs again in the handler, as defence in depth: a path is resolved against the
 * root, every symlink followed, and the result must lie inside the (canonical) root.
 */
final class ProjectPaths {
    private final Path root;

    /** {@code root} must exist; it is made canonical. */
    ProjectPaths(Path root) throws IOException {
        this.root = root.toRealPath();
        if (!Files.isDirectory(this.root)) {
            throw new IOException(root + " is not a directory");
        }
    }

    Path root() {
        return root;
    }

    /**
     * The canonical path of an existing file or directory named by a tool argument ({@code null}
     * or empty: the root), or a failure the model can act on.
     */
    Path existing(String argument, String name) throws ToolFailure {
        Path candidate = lexical(argument, name);
        Path real;
        try {
            real = candidate.toRealPath();
        } catch (NoSuchFileException e) {
            throw new ToolFailure("`" + display(argument) + "` does not exist in the project"
                    + " (paths are relative to the project root; list_directory shows what is there)");
        } catch (IOException e) {
            throw new ToolFailure("cannot resolve `" + display(argument) + "`: " + e.getMessage());
        }
        if (!real.startsWith(root)) {
            throw outside(argument, name);
        }
        return real;
    }

    /**
     * Like {@link #existing}, but a path that does not exist (a file deleted since a commit) is
     * accepted when it lies lexically inside the project and its nearest existing ancestor
     * does too.
     */
    Path confined(String argument, String name) throws ToolFailure {
        Path candidate = lexical(argument, name);
        if (Files.exists(candidate)) {
            return existing(argument, name);
        }
        Path ancestor = candidate.getParent();
        while (ancestor != null && !Files.exists(ancestor)) {
            ancestor = ancestor.getParent();
        }
        try {
            if (ancestor == null || !ancestor.toRealPath().startsWith(root)) {
                throw outside(argument, name);
            }
            return ancestor.toRealPath().resolve(ancestor.relativize(candidate));
        } catch (IOException e) {
            throw new ToolFailure("cannot resolve `" + display(argument) + "`: " + e.getMessage());
        }
    }

    /** The path without following links, refusing what lexically leaves the project. */
    private Path lexical(String argument, String name) throws ToolFailure {
        if (argument == null || argument.isEmpty() || argument.equals(".")) {
            return root;
        }
        Path given;
        try {
            given = Paths.get(argument);
        } catch (InvalidPathException e) {
            throw new ToolFailure("`" + name + "` is not a valid path: " + e.getMessage());
        }
        Path absolute = (given.isAbsolute() ? given : root.resolve(given)).normalize();
        if (!absolute.startsWith(root)) {
            throw outside(argument, name);
        }
        return absolute;
    }

    private ToolFailure outside(String argument, String name) {
        return new ToolFailure("`" + name + "` = `" + argument + "` is outside the project " + root
                + "; only paths inside the project can be used");
    }

    /** {@code path} relative to the root, with '/' separators; "." for the root. */
    String relative(Path path) {
        Path relative = root.relativize(path);
        String text = relative.toString().replace('\\', '/');
        return text.isEmpty() ? "." : text;
    }

    private static String display(String argument) {
        return argument == null || argument.isEmpty() ? "." : argument;
    }
}
