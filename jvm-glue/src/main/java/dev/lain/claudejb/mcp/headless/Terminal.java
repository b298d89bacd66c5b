package dev.lain.claudejb.mcp.headless;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Standard input, owned by one reader thread: the answers a person types to questions
 * ({@link #ask}, one question at a time), and the end of input ({@link #onEof}). Questions are
 * asked only when there is a person at a terminal ({@link #interactive()}). Everything it writes
 * goes through {@link TerminalText}, so no control character a client or a repository chose
 * reaches the terminal raw.
 */
final class Terminal {
    private static final String EOF = new String("<eof>");

    private final boolean interactive;
    private final PrintWriter prompts;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final ExecutorService asker;
    private final CompletableFuture<Void> eof = new CompletableFuture<>();
    private final Duration answerTimeout;
    private final Thread reader;

    Terminal(InputStream input, Charset charset, PrintWriter prompts, boolean interactive, Duration answerTimeout) {
        this.interactive = interactive;
        this.prompts = prompts;
        this.answerTimeout = answerTimeout;
        this.asker = Executors.newSingleThreadExecutor(runnable -> {
            Thread thread = new Thread(runnable, "headless-terminal-question");
            thread.setDaemon(true);
            return thread;
        });
        this.reader = new Thread(() -> read(new BufferedReader(new InputStreamReader(input, charset))),
                "headless-terminal-input");
        reader.setDaemon(true);
        reader.start();
    }

    /** The process's own terminal when there is one (System.console()), else stdin with no questions. */
    static Terminal system(Duration answerTimeout) {
        java.io.Console console = System.console();
        if (console != null) {
            return new Terminal(System.in, console.charset(), console.writer(), true, answerTimeout);
        }
        return new Terminal(System.in, Charset.defaultCharset(), null, false, answerTimeout);
    }

    private void read(BufferedReader reader) {
        try {
            String line;
            while ((line = reader.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException ignored) {
            // Treated as the end of input.
        }
        lines.add(EOF);
        eof.complete(null);
    }

    /** Whether a person can answer questions here. */
    boolean interactive() {
        return interactive;
    }

    /** Completes when standard input ends. */
    CompletableFuture<Void> onEof() {
        return eof;
    }

    /**
     * Asks {@code question} (a yes/no question; "[y/N]" is added) and completes with whether
     * the answer was yes. No terminal, the end of input or no answer in time is a no.
     */
    CompletableFuture<Boolean> ask(String question) {
        CompletableFuture<Boolean> answer = new CompletableFuture<>();
        if (!interactive) {
            answer.complete(false);
            return answer;
        }
        asker.execute(() -> {
            try {
                lines.removeIf(line -> line != EOF); // nothing typed before the question answers it
                synchronized (prompts) {
                    prompts.print("\n" + TerminalText.visible(question) + " [y/N] ");
                    prompts.flush();
                }
                String line = eof.isDone() && lines.isEmpty() ? EOF
                        : lines.poll(answerTimeout.toMillis(), TimeUnit.MILLISECONDS);
                if (line == EOF) {
                    lines.add(EOF); // later questions see the end too
                }
                boolean yes = line != null && line != EOF && line.trim().toLowerCase(java.util.Locale.ROOT).matches("y|yes");
                if (line == null) {
                    say("(no answer in time: no)");
                }
                answer.complete(yes);
            } catch (InterruptedException e) {
                answer.complete(false);
            } catch (RuntimeException e) {
                answer.complete(false);
            }
        });
        return answer;
    }

    /** A line for the person at the terminal (nothing without one). */
    void say(String text) {
        if (prompts != null) {
            synchronized (prompts) {
                prompts.println(TerminalText.visible(text));
                prompts.flush();
            }
        }
    }

    void close() {
        asker.shutdownNow();
        // An input that answers interrupts (a pipe) ends its reader now, not when its writer dies.
        reader.interrupt();
    }
}
