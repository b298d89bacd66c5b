package dev.lain.claudejb.mcp;

import java.util.List;

/**
 * What the servers ask of the application hosting them. Every method has a safe default, so
 * a host implements only what it has a UI or a policy for. Methods run on callback threads
 * and should return quickly.
 */
public interface Host {
    /**
     * Whether the host can show a confirmation to a person. Read once, at start. Without a
     * UI (headless, split mode) a guard's "ask" is a denial.
     */
    default boolean canConfirm() {
        return false;
    }

    /**
     * Asks the person whether {@code request} may run; answer through {@code confirmation},
     * now or later (for example from the EDT). No answer within the confirmation timeout is a
     * denial.
     */
    default void confirm(GuardRequest request, String prompt, Confirmation confirmation) {
        confirmation.decline();
    }

    /** Tools were withheld because their names normalise to the same name on {@code server}. */
    default void toolsWithheld(Server server, String normalizedName, List<String> tools) {
    }
}
