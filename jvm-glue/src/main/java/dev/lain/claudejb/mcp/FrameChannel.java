package dev.lain.claudejb.mcp;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * Length-prefixed frames over a Unix-domain socket, the servers' native wire:
 * {@code <payload byte length in decimal ASCII>\n<payload>}. The header is 1–10 ASCII digits
 * with no sign, space, CR or leading zero ({@code 0} alone is an empty payload); the payload is
 * at most {@link #MAX_FRAME_BYTES}. The header is read as a {@code long} and checked against the
 * limit before anything is converted or allocated: ten digits overflow an {@code int}. The
 * body's buffer grows with the bytes that arrive, never with the length a header declares.
 *
 * <p>One thread reads while others write. On JDK 17 the streams of {@code Channels.newInputStream}
 * and {@code Channels.newOutputStream} over one channel share its blocking lock, so a writer
 * waits forever behind a blocked reader; this class uses the channel's own {@code read} and
 * {@code write}, which have separate locks.
 */
final class FrameChannel implements MessageChannel {
    static final int MAX_HEADER_DIGITS = 10;

    private final SocketChannel channel;
    private final int maxFrameBytes;
    private final Object writeLock = new Object();
    private final ByteBuffer readBuffer = ByteBuffer.allocate(64 * 1024);

    FrameChannel(SocketChannel channel, int maxFrameBytes) {
        if (maxFrameBytes < 0 || maxFrameBytes > Contract.MAX_FRAME_BYTES) {
            throw new IllegalArgumentException("a frame limit must be 0.." + Contract.MAX_FRAME_BYTES + ", not " + maxFrameBytes);
        }
        this.channel = channel;
        this.maxFrameBytes = maxFrameBytes;
        readBuffer.flip();
    }

    static FrameChannel connect(Path socket) throws IOException {
        return new FrameChannel(open(socket), Contract.MAX_FRAME_BYTES);
    }

    static SocketChannel open(Path socket) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            channel.close();
            throw new IOException("cannot connect to " + socket + ": " + e.getMessage()
                    + " (is the IDE running with the project open?)", e);
        }
        return channel;
    }

    /** The header of a payload of {@code length} bytes. */
    static byte[] header(int length) {
        return (length + "\n").getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public void write(String payload) throws IOException {
        byte[] body = payload.getBytes(StandardCharsets.UTF_8);
        if (body.length > maxFrameBytes) {
            throw new IOException("a message of " + body.length + " bytes is over the frame limit of "
                    + maxFrameBytes + " bytes");
        }
        byte[] header = header(body.length);
        ByteBuffer[] buffers = {ByteBuffer.wrap(header), ByteBuffer.wrap(body)};
        synchronized (writeLock) {
            while (buffers[0].hasRemaining() || buffers[1].hasRemaining()) {
                channel.write(buffers);
            }
        }
    }

    private boolean fill() throws IOException {
        readBuffer.clear();
        int read = channel.read(readBuffer);
        readBuffer.flip();
        return read >= 0;
    }

    /** Parses a frame header, bounded before conversion; -1 at a clean end of stream. */
    static long parseHeader(ByteSource source, long max) throws IOException {
        long value = 0;
        int digits = 0;
        while (true) {
            int b = source.next();
            if (b < 0) {
                if (digits == 0) {
                    return -1;
                }
                throw new IOException("the stream ended inside a frame header");
            }
            if (b == '\n') {
                if (digits == 0) {
                    throw new IOException("bad frame header: empty header");
                }
                return value;
            }
            if (b < '0' || b > '9') {
                throw new IOException("bad frame header: byte 0x" + Integer.toHexString(b) + " is not a digit");
            }
            if (digits == MAX_HEADER_DIGITS) {
                throw new IOException("bad frame header: more than " + MAX_HEADER_DIGITS + " digits");
            }
            if (digits == 1 && value == 0) {
                throw new IOException("bad frame header: leading zero");
            }
            value = value * 10 + (b - '0');
            digits++;
            if (value > max) {
                throw new IOException("a frame declares at least " + value + " bytes, more than the limit of " + max);
            }
        }
    }

    /** One byte at a time from somewhere; -1 at the end. */
    interface ByteSource {
        int next() throws IOException;
    }

    @Override
    public String read() throws IOException {
        long declared = parseHeader(() -> {
            if (!readBuffer.hasRemaining() && !fill()) {
                return -1;
            }
            return readBuffer.get() & 0xff;
        }, maxFrameBytes);
        if (declared < 0) {
            return null;
        }
        int length = (int) declared; // bounded by maxFrameBytes above
        ByteArrayOutputStream body = new ByteArrayOutputStream(Math.min(length, readBuffer.capacity()));
        int missing = length;
        while (missing > 0) {
            if (!readBuffer.hasRemaining() && !fill()) {
                throw new IOException("the server closed the connection inside a frame (" + body.size()
                        + " of " + length + " bytes)");
            }
            int chunk = Math.min(missing, readBuffer.remaining());
            body.write(readBuffer.array(), readBuffer.arrayOffset() + readBuffer.position(), chunk);
            readBuffer.position(readBuffer.position() + chunk);
            missing -= chunk;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new IOException("a frame from the server is not valid UTF-8", e);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
