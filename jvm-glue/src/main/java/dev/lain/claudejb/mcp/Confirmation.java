package dev.lain.claudejb.mcp;

/** The answer to one {@link Host#confirm} question; answer once, from any thread. */
public final class Confirmation {
    private final long id;

    Confirmation(long id) {
        this.id = id;
    }

    /** The person allowed the call. Returns whether the call was still waiting. */
    public boolean allow() {
        return Native.answerConfirmation(id, true);
    }

    /** The person declined (or closed the dialog). Returns whether the call was still waiting. */
    public boolean decline() {
        return Native.answerConfirmation(id, false);
    }
}
