package dev.lain.claudejb.mcp;

/**
 * Judges every {@code run(tool, args)} before anything runs. Called on a callback thread; it
 * must answer within the guard timeout ({@link IdeMcpServers.Options.Builder#guardTimeout}),
 * or the call is denied. A guard that throws denies the call too.
 */
@FunctionalInterface
public interface SecurityGuard {
    Verdict judge(GuardRequest request) throws Exception;

    /** Allows everything: for tests and demos only, never in an IDE. */
    static SecurityGuard allowAll() {
        return request -> Verdict.allow();
    }
}
