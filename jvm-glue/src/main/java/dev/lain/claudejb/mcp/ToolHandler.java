package dev.lain.claudejb.mcp;

/**
 * A tool's implementation. {@link #call} runs on one of the library's few callback threads, so
 * it should return quickly: do slow IDE work elsewhere (a background task, a read action) and
 * answer later through the context from any thread. A handler that throws answers the call
 * with an error naming the exception.
 */
@FunctionalInterface
public interface ToolHandler {
    /** Starts one call; answer exactly once with {@link ToolCallContext#complete} or {@link ToolCallContext#fail}. */
    void call(ToolCallContext context) throws Exception;
}
