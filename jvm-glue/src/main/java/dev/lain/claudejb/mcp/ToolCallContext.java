package dev.lain.claudejb.mcp;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One call of a tool: its arguments, its cancellation, and the way to answer. Every method is
 * safe from any thread. Answering twice, or after the call was cancelled or timed out, does
 * nothing (the methods return {@code false}).
 */
public final class ToolCallContext {
    private final long callId;
    private final long callNumber;
    private final String argumentsJson;
    private final boolean explicitlyAllowed;
    private final List<Runnable> cancelActions = new ArrayList<>();
    private boolean cancelled;
    private volatile boolean answered;

    @CalledFromNative
    ToolCallContext(long callId, long callNumber, String argumentsJson, boolean explicitlyAllowed) {
        this.callId = callId;
        this.callNumber = callNumber;
        this.argumentsJson = argumentsJson;
        this.explicitlyAllowed = explicitlyAllowed;
    }

    /**
     * Whether the Security Guard answered {@link Verdict#allowExplicitly()} for this call: then
     * the handler may show what the credential rule withholds (a file whose content holds a
     * private key, say). {@link ConfinedFiles} asks this for every read and search it makes
     * with this context; a plain allow, or a person's confirmation of an ask, is not enough.
     */
    public boolean explicitlyAllowed() {
        return explicitlyAllowed;
    }

    /** The call's number: the one the guard saw in {@link GuardRequest#callNumber()}. */
    public long callNumber() {
        return callNumber;
    }

    /** The arguments as a JSON object, validated against the tool's schema. */
    public String argumentsJson() {
        return argumentsJson;
    }

    /** The arguments parsed: a map of strings, numbers ({@link java.math.BigDecimal}), booleans, lists, maps and nulls. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> arguments() {
        // Checked and budgeted by the library already (within maxArgumentBytes).
        return (Map<String, Object>) Json.parse(argumentsJson, DecodeBudget.UNLIMITED);
    }

    /** A string argument, or {@code null} when absent or not a string. */
    public String stringArgument(String name) {
        Object value = arguments().get(name);
        return value instanceof String ? (String) value : null;
    }

    /** Whether the client cancelled, the deadline passed, the connection closed or the servers stopped. */
    public boolean isCancelled() {
        synchronized (this) {
            if (cancelled) {
                return true;
            }
        }
        return !answered && Native.isCallCancelled(callId);
    }

    /** Runs {@code action} when the call is cancelled (at once if it already was). */
    public void onCancel(Runnable action) {
        boolean runNow;
        synchronized (this) {
            runNow = cancelled;
            if (!runNow) {
                cancelActions.add(action);
            }
        }
        if (runNow) {
            action.run();
        }
    }

    /**
     * Reports progress, shown to clients that asked for it. {@code total} may be {@code null}
     * when unknown; progress should grow with each report.
     */
    public void reportProgress(double progress, Double total, String message) {
        Native.reportProgress(callId, progress, total == null ? Double.NaN : total, message);
    }

    /** Answers with a JSON result (any JSON value). Returns whether the call was still waiting. */
    public boolean complete(String jsonResult) {
        answered = true;
        return Native.completeCall(callId, jsonResult);
    }

    /** Answers with a plain text result. */
    public boolean completeText(String text) {
        return complete(Json.quote(text));
    }

    /** Answers with an error the model can act on. Returns whether the call was still waiting. */
    public boolean fail(String message) {
        answered = true;
        return Native.failCall(callId, message);
    }

    /** Whether this handler already answered. */
    public boolean isAnswered() {
        return answered;
    }

    /** Marks the call cancelled and runs the actions; every action runs even if one throws. */
    void fireCancelled() {
        List<Runnable> actions;
        synchronized (this) {
            // An answered call has nothing left to stop.
            if (cancelled || answered) {
                return;
            }
            cancelled = true;
            actions = new ArrayList<>(cancelActions);
            cancelActions.clear();
        }
        RuntimeException first = null;
        for (Runnable action : actions) {
            try {
                action.run();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
