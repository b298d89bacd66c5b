package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.GuardRequest;
import dev.lain.claudejb.mcp.SecurityGuard;
import dev.lain.claudejb.mcp.Verdict;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The headless host's policy: read-only tools run; anything else asks the person (and with no
 * one to ask, the library denies). The library's baseline policy comes first either way: a
 * path outside the project or at a credential file is denied, since this guard never answers
 * {@link Verdict#allowExplicitly()}.
 */
final class HeadlessGuard implements SecurityGuard {
    /** How long the guard waits for the tasks file to be read before it denies. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

    private final TaskCatalog tasks;
    private final TaskSnapshots snapshots;
    /**
     * Reads the tasks file for the guard, so the library's callback thread that runs the guard
     * never waits on the file system itself: a file swapped for a FIFO after the check holds
     * this one thread, never the callback pool.
     */
    private final ExecutorService reader = Executors.newSingleThreadExecutor(runnable -> {
        Thread thread = new Thread(runnable, "headless-guard-tasks-reader");
        thread.setDaemon(true);
        return thread;
    });

    HeadlessGuard(TaskCatalog tasks, TaskSnapshots snapshots) {
        this.tasks = tasks;
        this.snapshots = snapshots;
    }

    @Override
    public Verdict judge(GuardRequest request) {
        if (request.readOnly() && !request.destructive()) {
            return Verdict.allow();
        }
        if (request.tool().equals("run_task") && request.domain().equals("tasks")) {
            Object name = request.arguments().get("name");
            try {
                // The one read of the task for this call: the prompt shows this snapshot, and the
                // handler runs it.
                TaskCatalog.Task task = find(String.valueOf(name));
                snapshots.put(request.callNumber(), task);
                return Verdict.ask("Run task " + task.describe() + "?");
            } catch (ToolFailure e) {
                return Verdict.deny(e.getMessage());
            }
        }
        return Verdict.ask("Allow " + request.domain() + "/" + request.tool() + " " + request.argumentsJson() + "?");
    }

    private TaskCatalog.Task find(String name) throws ToolFailure {
        Future<TaskCatalog.Task> reading = reader.submit(() -> tasks.find(name));
        try {
            return reading.get(READ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof ToolFailure) {
                throw (ToolFailure) e.getCause();
            }
            throw new ToolFailure("cannot read " + TaskCatalog.FILE + ": " + e.getCause());
        } catch (TimeoutException e) {
            reading.cancel(true);
            throw new ToolFailure(TaskCatalog.FILE + " could not be read within " + READ_TIMEOUT.getSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ToolFailure("interrupted while reading " + TaskCatalog.FILE);
        }
    }

    void close() {
        reader.shutdownNow();
    }
}
