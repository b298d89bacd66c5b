package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Domain;
import dev.lain.claudejb.mcp.Server;
import dev.lain.claudejb.mcp.Tool;
import dev.lain.claudejb.mcp.ToolCallContext;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** The {@code tasks} domain on {@code run}: the tasks the project declares, and running one. */
final class TasksDomain {
    /**
     * The start and the end of a task's output kept in its result: with the escaping of its
     * newlines, the result stays within the library's default output budget (32 KiB), so the end
     * is seen too.
     */
    static final int MAX_OUTPUT_BYTES = 12 * 1024;

    private final TaskCatalog catalog;
    private final TaskSnapshots snapshots;

    private TasksDomain(TaskCatalog catalog, TaskSnapshots snapshots) {
        this.catalog = catalog;
        this.snapshots = snapshots;
    }

    static Domain domain(TaskCatalog catalog, TaskSnapshots snapshots, ToolRunner runner) {
        TasksDomain domain = new TasksDomain(catalog, snapshots);
        return Domain.builder("tasks", Server.RUN)
                .description("The tasks the project declares in " + TaskCatalog.FILE + " (build, test, …), and running them")
                .tool(Tool.builder("list_tasks")
                        .description("The declared tasks: name, command and description")
                        .readOnly()
                        .inputSchema(Schemas.object(Schemas.required()))
                        .handler(runner.handler("list_tasks", (context, args) -> domain.listTasks()))
                        .build())
                .tool(Tool.builder("run_task")
                        .description("Runs a declared task in the project directory and answers with its exit code and "
                                + "output (the start and the end when long). A person must allow each run.")
                        .destructive()
                        .deadline(TaskCatalog.MAX_TIMEOUT.plusMinutes(1))
                        .inputSchema(Schemas.object(Schemas.required("name"),
                                Schemas.string("name", "The task's name, as list_tasks shows it")))
                        .handler(runner.handler("run_task", (context, args) -> domain.runTask(context, args)))
                        .build())
                .build();
    }

    Object listTasks() throws ToolFailure {
        List<Object> tasks = new ArrayList<>();
        for (TaskCatalog.Task task : catalog.load().values()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("name", task.name);
            entry.put("command", task.commandLine());
            entry.put("description", task.description);
            tasks.add(entry);
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("tasks", tasks);
        if (tasks.isEmpty()) {
            result.put("note", "the project declares no tasks; they go in " + TaskCatalog.FILE
                    + " as {\"tasks\": {\"test\": {\"command\": [\"cargo\", \"test\"], \"description\": \"…\"}}}");
        }
        return result;
    }

    Object runTask(ToolCallContext context, Args args) throws ToolFailure, IOException, InterruptedException {
        // Exactly what the guard judged and the person approved, never the file read again.
        TaskCatalog.Task task = snapshots.take(context.callNumber());
        if (task == null || !task.name.equals(args.requiredString("name"))) {
            throw new ToolFailure("no approved snapshot of task `" + args.requiredString("name")
                    + "` for this call; nothing ran");
        }
        try {
            if (!task.directory.toRealPath().equals(task.directory)) {
                throw new ToolFailure("the directory of task `" + task.name + "` (" + task.directory
                        + ") changed since it was approved; nothing ran");
            }
        } catch (IOException e) {
            throw new ToolFailure("the directory of task `" + task.name + "` is gone: " + e.getMessage());
        }
        HostLog.info("running task `" + task.name + "`: " + task.commandLine());
        AtomicLong lines = new AtomicLong();
        AtomicLong lastReport = new AtomicLong(System.nanoTime());
        ProcessRunner.Outcome outcome;
        try {
            outcome = ProcessRunner.run(task.command, task.directory, task.environment(), task.timeout,
                MAX_OUTPUT_BYTES, true, true, context, line -> {
                    long count = lines.incrementAndGet();
                    long now = System.nanoTime();
                    long last = lastReport.get();
                    if (now - last > Duration.ofSeconds(1).toNanos() && lastReport.compareAndSet(last, now)) {
                        context.reportProgress(count, null, line.length() > 200 ? line.substring(0, 200) : line);
                    }
                });
        } catch (IOException e) {
            throw new ToolFailure("task `" + task.name + "` could not start: " + e.getMessage());
        }
        if (outcome.cancelled) {
            throw new InterruptedException();
        }
        HostLog.info("task `" + task.name + "` " + (outcome.timedOut ? "timed out" : "exited with " + outcome.exitCode)
                + " after " + outcome.millis + " ms");
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("task", task.name);
        result.put("command", task.commandLine());
        result.put("exitCode", outcome.timedOut ? null : outcome.exitCode);
        result.put("succeeded", !outcome.timedOut && outcome.exitCode == 0);
        if (outcome.timedOut) {
            result.put("timedOut", "killed after " + task.timeout.getSeconds() + " s (the task's timeoutSeconds)");
        }
        result.put("durationMillis", outcome.millis);
        if (outcome.truncated) {
            result.put("truncated", "the output was " + outcome.outputBytes + " bytes; shown are its start and its end");
        }
        result.put("output", outcome.output);
        return result;
    }
}
