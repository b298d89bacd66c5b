package dev.lain.claudejb.mcp;

import java.io.IOException;

/**
 * One connection's messages, as text: length-prefixed frames ({@link FrameChannel}) or
 * newline-delimited lines ({@link LineChannel}). One thread reads while others write.
 */
interface MessageChannel extends AutoCloseable {
    /** Sends one message; safe from several threads. */
    void write(String message) throws IOException;

    /** The next message, or {@code null} at a clean end of stream. One reader thread only. */
    String read() throws IOException;

    @Override
    void close() throws IOException;
}
