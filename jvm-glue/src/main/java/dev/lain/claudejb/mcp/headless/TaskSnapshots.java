package dev.lain.claudejb.mcp.headless;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The task snapshots the guard took, by the call's number, until the handler of that call takes
 * its own: the handler runs exactly what the person was shown and approved, whatever
 * {@code .ide-mcp/tasks.json} says by then. A call that was declined or cancelled never takes
 * its snapshot; the oldest of those are dropped past {@link #CAPACITY}.
 */
final class TaskSnapshots {
    static final int CAPACITY = 64;

    private final Map<Long, TaskCatalog.Task> byCall = new LinkedHashMap<Long, TaskCatalog.Task>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, TaskCatalog.Task> eldest) {
            return size() > CAPACITY;
        }
    };

    /** Keeps what the guard judged for call {@code callNumber}. */
    synchronized void put(long callNumber, TaskCatalog.Task task) {
        byCall.put(callNumber, task);
    }

    /** The snapshot of call {@code callNumber}, once; null when the guard took none for it. */
    synchronized TaskCatalog.Task take(long callNumber) {
        return byCall.remove(callNumber);
    }
}
