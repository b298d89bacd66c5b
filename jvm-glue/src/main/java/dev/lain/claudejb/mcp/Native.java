package dev.lain.claudejb.mcp;

/**
 * Every native method of the library, in one place. Package-private: plugins use
 * {@link IdeMcpServers}. See docs/JNI.md for the thread each runs on and what it throws.
 */
final class Native {
    static {
        NativeLoader.load();
        // Until a host chooses its own sink, the records go to java.util.logging, which an IDE
        // routes into its log: nothing is dropped for want of a sink.
        setLogSink(JavaUtilLoggingSink.INSTANCE, JavaUtilLoggingSink.INSTANCE.threshold().number());
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

    /** This set's registry record file, or null when the set is not registered. */
    static native String registryRecord(long handle);

    static native String socketPath(long handle, String server);

    static native String[] liveServers(long handle);

    /** {@code {socket, tokenFile}} of {@code server} of the live set serving the directory. */
    static native String[] liveSetEndpoint(String projectDirectory, String server);

    static native boolean completeCall(long callId, String resultJson);

    /** {@link #admitJoint}: the handler must not start. */
    static final int JOINT_REFUSED = 0;
    /** {@link #admitJoint}: the handler may start. */
    static final int JOINT_ALLOWED = 1;
    /** {@link #admitJoint}: the handler may start, and the guard allowed the call explicitly. */
    static final int JOINT_EXPLICITLY_ALLOWED = 2;

    /**
     * The verdict of the guard judging a joint call on this callback thread (the kind as
     * {@code Verdict.code()}, or {@code Verdict.NO_VERDICT}; the reason or prompt): whether the
     * handler may start. Called by {@code NativeCallbacks.judgeAndStart} only.
     */
    static native int admitJoint(int verdictCode, String text);

    static native boolean failCall(long callId, String message);

    static native boolean isCallCancelled(long callId);

    /** {@code total} is NaN when unknown. */
    static native void reportProgress(long callId, double progress, double total, String message);

    static native boolean answerConfirmation(long confirmationId, boolean allowed);

    static native boolean answerAdmission(long admissionId, boolean allowed);

    static native void declareLaunchedClient(long handle, long pid);

    static native void forgetLaunchedClient(long handle, long pid);

    static native void grantAdmissionCredit(long handle, long validForMillis);

    /** The audit records as a JSON array, oldest first. */
    static native String auditLog(long handle);

    /** {@code launcherJson} is {@code {"java":{"javaHome","pluginDir"}}} or {@code {"native":{"executable"}}}. */
    static native String mcpServersBlock(long handle, String launcherJson);

    /** Calls the host's split-mode notice (on a callback thread) and returns the block it was given. */
    static native String announceSplitMode(long handle, String launcherJson);

    static native String splitModeMessage();

    static native long newPageDelivery();

    static native boolean freePageDelivery(long delivery);

    static native void registerRoute(long delivery, String route);

    /** Returns the state's number: 0 waiting, 1 shown, 2 enter split mode, 3 in split mode. */
    static native int reportRoute(long delivery, String route, boolean delivered, String reason);

    /** The routes and outcomes as a JSON array. */
    static native String routeOutcomes(long delivery);

    static native void setLogSink(Object sink, int maxLevel);

    static native long droppedLogRecords();

    static native int pendingCallCount();

    static native int liveServerSetCount();

    static native int pendingQuestionCount();

    static native int livePageDeliveryCount();

    /** The Rust contract constants ({@code ide_mcp_protocol::contract}) as a JSON object keyed by name. */
    static native String contractJson();

    /** The keys of the Rust {@code ServerConfig} options as a JSON array. */
    static native String optionKeys();

    // Present only in the test build of the library (cargo feature `testing`).

    static native void TESTING_panicInNativeCall(String message);

    static native void TESTING_registerPanickingTool(long handle, String server, String domain, String tool);

    static native String TESTING_callThrowingJava(String message);

    static native String TESTING_callThrowingJavaOnCallbackThread(String message);

    // Project files (ConfinedFiles): confined reads, listings and searches beneath a root.

    static native long filesOpen(String root, boolean portableWalk);

    static native boolean filesClose(long handle);

    static native String filesRoot(long handle);

    /** Line numbers and limits of 0 are unset. Returns the lines as JSON. */
    static native String filesReadLines(long handle, String path, long startLine, long endLine, long maxFileBytes,
                                        long maxWholeBytes, long maxContentBytes, boolean allowCredentials);

    static native String filesListDirectory(long handle, String path, long maxEntries);

    static native String filesStat(long handle, String path);

    static native long filesNewCancel();

    static native boolean filesCancel(long cancel);

    static native boolean filesFreeCancel(long cancel);

    /** Runs on the calling thread until done, its deadline, or {@link #filesCancel}. */
    static native String filesSearchText(long handle, long cancel, String requestJson);

    static native String filesFindFiles(long handle, long cancel, String requestJson);
}
