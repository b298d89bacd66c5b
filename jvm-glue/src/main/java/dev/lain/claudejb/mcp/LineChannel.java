package dev.lain.claudejb.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Newline-delimited JSON over a Unix-domain socket: the servers speak it on a connection whose
 * first byte is {@code '{'}.
 *
 * <p>One thread reads while others write. On JDK 17 the streams of {@code Channels.newInputStream}
 * and {@code Channels.newOutputStream} over one channel share its blocking lock, so a writer
 * waits forever behind a blocked reader. This class therefore uses the channel's own
 * {@code read} and {@code write}, which have separate locks.
 */
final class LineChannel implements MessageChannel {
    /** The longest line accepted: the servers' largest frame plus room for the envelope. */
    static final int MAX_LINE_BYTES = Contract.MAX_FRAME_BYTES + 1024;

    private final SocketChannel channel;
    private final Object writeLock = new Object();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(64 * 1024);
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();

    private LineChannel(SocketChannel channel) {
        this.channel = channel;
        readBuffer.flip();
    }

    static LineChannel connect(Path socket) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot connect to " + socket + ": " + e.getMessage()
                    + " (is the IDE running with the project open?)", e);
        }
        return new LineChannel(channel);
    }

    @Override
    public void write(String message) throws IOException {
        writeLine(message);
    }

    @Override
    public String read() throws IOException {
        return readLine();
    }

    /** Writes one message and its newline; safe from several threads. */
    void writeLine(String json) throws IOException {
        byte[] bytes = (json + "\n").getBytes(StandardCharsets.UTF_8);
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        synchronized (writeLock) {
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
        }
    }

    /** Reads the next line without its newline, or {@code null} at end of stream. One reader thread only. */
    String readLine() throws IOException {
        while (true) {
            while (readBuffer.hasRemaining()) {
                byte b = readBuffer.get();
                if (b == '\n') {
                    String text = line.toString(StandardCharsets.UTF_8);
                    line.reset();
                    return text;
                }
                if (line.size() >= MAX_LINE_BYTES) {
                    throw new IOException("a line from the server is longer than " + MAX_LINE_BYTES + " bytes");
                }
                line.write(b);
            }
            readBuffer.clear();
            int read = channel.read(readBuffer);
            readBuffer.flip();
            if (read < 0) {
                if (line.size() > 0) {
                    throw new IOException("the server closed the connection inside a message");
                }
                return null;
            }
        }
    }

    /** Ends the sending direction: the server sees end of stream after what was sent. */
    void shutdownOutput() throws IOException {
        channel.shutdownOutput();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
