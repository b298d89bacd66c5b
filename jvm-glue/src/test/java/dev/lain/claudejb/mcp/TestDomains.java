package dev.lain.claudejb.mcp;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/** Domains and tools the tests share. */
final class TestDomains {
    private TestDomains() {
    }

    /** {@code files/read_file {path}}: reads a file under {@code project}. */
    static Domain files(Path project) {
        return files(project, () -> { });
    }

    /** {@link #files(Path)} whose handler runs {@code onCall} first, each time it is reached. */
    static Domain files(Path project, Runnable onCall) {
        return Domain.builder("files", Server.CODE)
                .description("Read the project's files")
                .tool(Tool.builder("read_file")
                        .description("Reads a UTF-8 file, given its path relative to the project root")
                        .readOnly()
                        .inputSchema("{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}},"
                                + "\"required\":[\"path\"],\"additionalProperties\":false}")
                        .handler(context -> {
                            onCall.run();
                            String path = context.stringArgument("path");
                            Path file = project.resolve(path).normalize();
                            if (!file.startsWith(project)) {
                                context.fail("`" + path + "` is outside the project");
                                return;
                            }
                            try {
                                context.completeText(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
                            } catch (NoSuchFileException e) {
                                context.fail("no file `" + path + "` in the project; list the directory first");
                            }
                        })
                        .build())
                .build();
    }

    /** A handler that counts its calls in {@code runs} and answers its arguments. */
    static ToolHandler echoing(AtomicInteger runs) {
        return context -> {
            runs.incrementAndGet();
            context.complete(context.argumentsJson());
        };
    }

    /** {@code echo}: read-only, answers its arguments, counts its calls in {@code runs}. */
    static Tool echo(AtomicInteger runs) {
        return Tool.builder("echo").description("Echoes").readOnly().handler(echoing(runs)).build();
    }
}
