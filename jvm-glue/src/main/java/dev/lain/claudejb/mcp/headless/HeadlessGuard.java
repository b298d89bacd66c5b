package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.GuardRequest;
import dev.lain.claudejb.mcp.SecurityGuard;
import dev.lain.claudejb.mcp.Verdict;

/**
 * The headless host's policy: read-only tools run; anything else asks the person (and with no
 * one to ask, the library denies). The library's baseline policy comes first either way: a
 * path outside the project or at a credential file is denied, since this guard never answers
 * {@link Verdict#allowExplicitly()}.
 */
final class HeadlessGuard implements SecurityGuard {
    private final TaskCatalog tasks;
    private final TaskSnapshots snapshots;

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
                TaskCatalog.Task task = tasks.find(String.valueOf(name));
                snapshots.put(request.callNumber(), task);
                return Verdict.ask("Run task " + task.describe() + "?");
            } catch (ToolFailure e) {
                return Verdict.deny(e.getMessage());
            }
        }
        return Verdict.ask("Allow " + request.domain() + "/" + request.tool() + " " + request.argumentsJson() + "?");
    }
}
