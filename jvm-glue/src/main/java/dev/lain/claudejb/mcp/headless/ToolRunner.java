package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import dev.lain.claudejb.mcp.ToolCallContext;
import dev.lain.claudejb.mcp.ToolHandler;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs tool work off the library's callback threads: a handler made here only submits the work
 * and returns, the work answers through the context when done, and a cancelled call interrupts
 * it. Counts calls per tool, for the {@code status} tool. The headless host gives each server a
 * runner of its own, so one server's stuck work never holds another server's threads.
 */
final class ToolRunner implements AutoCloseable {
    /** One tool's work: returns the result (a JSON value), or throws {@link ToolFailure}. */
    @FunctionalInterface
    interface Work {
        Object run(ToolCallContext context, Args args) throws Exception;
    }

    private final ExecutorService executor;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final Map<String, AtomicLong> callsByTool = new ConcurrentHashMap<>();

    private final int threads;

    /** A runner of {@code threads} threads, named after {@code owner} (a server). */
    ToolRunner(String owner, int threads) {
        this.threads = threads;
        AtomicInteger number = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), runnable -> {
                    Thread thread = new Thread(runnable, "headless-" + owner + "-tool-" + number.incrementAndGet());
                    thread.setDaemon(true);
                    return thread;
                });
        pool.allowCoreThreadTimeOut(true);
        this.executor = pool;
    }

    /** A handler that runs {@code work} on this runner's threads. */
    ToolHandler handler(String toolName, Work work) {
        return context -> {
            started.incrementAndGet();
            callsByTool.computeIfAbsent(toolName, name -> new AtomicLong()).incrementAndGet();
            inFlight.incrementAndGet();
            Future<?> future;
            try {
                future = executor.submit(() -> runOne(toolName, work, context));
            } catch (RuntimeException rejected) {
                inFlight.decrementAndGet();
                context.fail("the headless host is shutting down");
                return;
            }
            context.onCancel(() -> future.cancel(true));
        };
    }

    private void runOne(String toolName, Work work, ToolCallContext context) {
        String result = null;
        String failure = null;
        try {
            if (context.isCancelled()) {
                return;
            }
            result = Json.write(work.run(context, new Args(context.arguments())));
        } catch (ToolFailure e) {
            failed.incrementAndGet();
            failure = e.getMessage();
        } catch (InterruptedException e) {
            failure = "cancelled";
        } catch (Exception | Error e) {
            failed.incrementAndGet();
            HostLog.error("tool " + toolName + " failed", e);
            failure = toolName + " failed: " + e;
        } finally {
            // Over before the client hears of it: a status read after the reply never counts it.
            inFlight.decrementAndGet();
            Thread.interrupted(); // a cancellation's interrupt must not leak into the next call
        }
        if (failure != null) {
            context.fail(failure);
        } else {
            context.complete(result);
        }
    }

    /** How many tools this runner runs at once; more wait in its queue. */
    int threads() {
        return threads;
    }

    int inFlight() {
        return inFlight.get();
    }

    long started() {
        return started.get();
    }

    long failed() {
        return failed.get();
    }

    Map<String, AtomicLong> callsByTool() {
        return callsByTool;
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
