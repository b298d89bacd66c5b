package dev.lain.claudejb.mcp;

import java.util.Arrays;

/**
 * The Java methods the native library calls, all static, all here. Parameters are typed
 * {@code Object} and cast, so a wrong object from native code is a {@link ClassCastException}
 * the native side reports, never a crash. Exceptions are not caught here: the native side takes
 * and clears every one and turns it into an error value.
 */
@CalledFromNative
final class NativeCallbacks {
    private NativeCallbacks() {
    }

    /**
     * Runs a handler: makes the call's context and hands it over. Returns the context when the
     * handler returned without answering (the library keeps it, to tell it of a cancellation),
     * {@code null} when it answered: nothing is left to tell it.
     */
    @CalledFromNative
    static Object startCall(Object handler, long callId, long callNumber, String argumentsJson,
            boolean explicitlyAllowed) throws Exception {
        ToolCallContext context = new ToolCallContext(callId, callNumber, argumentsJson, explicitlyAllowed);
        ((ToolHandler) handler).call(context);
        return context.isAnswered() ? null : context;
    }

    /**
     * One entry for a call judged by a Java guard and handled by a Java handler: judges it,
     * gives the verdict to the library ({@link Native#admitJoint}, which applies the
     * checkpoint's rules, writes the audit record and says whether the handler may start) and,
     * when it may, runs the handler with the very arguments string the guard judged. Returns
     * what {@link #startCall} returns, or {@code null} when the handler did not start. What the
     * guard or the handler throws goes back to the library, which tells the two apart by
     * whether the verdict was given.
     */
    @CalledFromNative
    static Object judgeAndStart(Object guard, Object handler, String server, String domain, String tool,
                                String argumentsJson, boolean readOnly, boolean destructive, int pid,
                                String clientName, long connectionId, long callNumber, String[] concerns,
                                long callId) throws Exception {
        GuardRequest request = new GuardRequest(Server.fromWireName(server), domain, tool, argumentsJson,
                readOnly, destructive, pid, clientName, connectionId, callNumber, Arrays.asList(concerns));
        Verdict verdict = ((SecurityGuard) guard).judge(request);
        int admitted = verdict == null
                ? Native.admitJoint(Verdict.NO_VERDICT, null)
                : Native.admitJoint(verdict.code(), verdict.text());
        if (admitted == Native.JOINT_REFUSED) {
            return null;
        }
        return startCall(handler, callId, callNumber, argumentsJson, admitted == Native.JOINT_EXPLICITLY_ALLOWED);
    }

    @CalledFromNative
    static void fireCancelled(Object context) {
        ((ToolCallContext) context).fireCancelled();
    }

    @CalledFromNative
    static String judge(Object guard, String server, String domain, String tool, String argumentsJson,
                        boolean readOnly, boolean destructive, int pid, String clientName, long connectionId,
                        long callNumber, String[] concerns)
            throws Exception {
        GuardRequest request = new GuardRequest(Server.fromWireName(server), domain, tool, argumentsJson,
                readOnly, destructive, pid, clientName, connectionId, callNumber, Arrays.asList(concerns));
        Verdict verdict = ((SecurityGuard) guard).judge(request);
        return verdict == null ? null : verdict.encode();
    }

    @CalledFromNative
    static void confirm(Object host, String server, String domain, String tool, String argumentsJson,
                        boolean readOnly, boolean destructive, int pid, String clientName, long connectionId,
                        long callNumber, String[] concerns, String prompt, long confirmationId) {
        GuardRequest request = new GuardRequest(Server.fromWireName(server), domain, tool, argumentsJson,
                readOnly, destructive, pid, clientName, connectionId, callNumber, Arrays.asList(concerns));
        ((Host) host).confirm(request, prompt, new Confirmation(confirmationId));
    }

    @CalledFromNative
    static void toolsWithheld(Object host, String server, String normalizedName, String[] tools) {
        ((Host) host).toolsWithheld(Server.fromWireName(server), normalizedName, Arrays.asList(tools));
    }

    @CalledFromNative
    static void unexpectedClient(Object host, int pid, String executable, String[] commandLine, long admissionId) {
        ((Host) host).unexpectedClient(new UnexpectedClient(pid, executable, Arrays.asList(commandLine)),
                new AdmissionAnswer(admissionId));
    }

    @CalledFromNative
    static void splitModeNotice(Object host, String message, String mcpServersJson) {
        ((Host) host).splitModeNotice(message, mcpServersJson);
    }

    @CalledFromNative
    static void log(Object sink, int level, String message) {
        ((LogSink) sink).log(LogSink.Level.fromNumber(level), message);
    }

    /** Always throws: the test build's native code proves it takes the exception as a value. */
    @CalledFromNative
    static void throwForTesting(String message) {
        throw new IllegalStateException(message);
    }
}
