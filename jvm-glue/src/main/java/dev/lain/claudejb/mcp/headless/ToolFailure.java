package dev.lain.claudejb.mcp.headless;

/** A failure whose message goes back to the model as the tool's error result. */
public final class ToolFailure extends Exception {
    private static final long serialVersionUID = 1L;

    public ToolFailure(String message) {
        super(message);
    }
}
