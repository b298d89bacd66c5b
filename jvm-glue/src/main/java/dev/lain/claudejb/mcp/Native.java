package dev.lain.claudejb.mcp;

/**
 * Every native method of the library, in one place. Package-private: plugins use
 * {@link IdeMcpServers}. See docs/JNI.md for the thread each runs on and what it throws.
 */
final class Native {
    static {
        NativeLoader.load();
    }

    private Native() {
    }

    static native long start(String optionsJson, Object guard, Object host);

    static native void stop(long handle);

    /** Returns the withheld tools ({@code domain/name}) as a JSON array of strings. */
    static native String registerDomain(long handle, String domainJson, Object[] handlers);

    static native boolean removeDomain(long handle, String server, String name);

    static native void rotateToken(long handle);

    static native String directory(long handle);

    static native String socketPath(long handle, String server);

    static native String[] liveServers(long handle);

    static native boolean completeCall(long callId, String resultJson);

    static native boolean failCall(long callId, String message);

    static native boolean isCallCancelled(long callId);

    /** {@code total} is NaN when unknown. */
    static native void reportProgress(long callId, double progress, double total, String message);

    static native boolean answerConfirmation(long confirmationId, boolean allowed);

    static native void setLogSink(Object sink, int maxLevel);

    static native long droppedLogRecords();

    static native int pendingCallCount();

    static native int liveServerSetCount();

    // Present only in the test build of the library (cargo feature `testing`).

    static native void TESTING_panicInNativeCall(String message);

    static native void TESTING_registerPanickingTool(long handle, String server, String domain, String tool);

    static native String TESTING_callThrowingJava(String message);

    static native String TESTING_callThrowingJavaOnCallbackThread(String message);
}
