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

    HeadlessGuard(TaskCatalog tasks) {
        this.tasks = tasks;
    }

    @Override
    public Verdict judge(GuardRequest request) {
        if (request.readOnly() && !request.destructive()) {
            return Verdict.allow();
        }
        if (request.tool().equals("run_task") && request.domain().equals("tasks")) {
            Object name = request.arguments().get("name");
            try {
                TaskCatalog.Task task = tasks.find(String.valueOf(name));
                return Verdict.ask("Run task `" + task.name + "` (" + task.commandLine() + ") in "
                        + tasks.file().getParent().getParent() + "?");
            } catch (ToolFailure e) {
                return Verdict.deny(e.getMessage());
            }
        }
        return Verdict.ask("Allow " + request.domain() + "/" + request.tool() + " " + request.argumentsJson() + "?");
    }
}
