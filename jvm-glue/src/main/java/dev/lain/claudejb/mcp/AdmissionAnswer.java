package dev.lain.claudejb.mcp;

/**
 * The answer to one {@link Host#unexpectedClient} prompt: answer once, from any thread, now or
 * later (for example from a notification's buttons on the EDT). No answer within the admission
 * timeout, or the client going away, closes the connection.
 */
public final class AdmissionAnswer {
    private final long id;

    AdmissionAnswer(long id) {
        this.id = id;
    }

    /** Let the client talk to the servers. Returns whether the prompt was still waiting. */
    public boolean allow() {
        return Native.answerAdmission(id, true);
    }

    /**
     * Close the client's connection; it is refused without a new prompt for the rejection
     * cooldown. Returns whether the prompt was still waiting.
     */
    public boolean reject() {
        return Native.answerAdmission(id, false);
    }
}
