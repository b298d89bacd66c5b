package dev.lain.claudejb.mcp;

import java.util.Objects;

/** A {@link SecurityGuard}'s answer for one call. */
public final class Verdict {
    private final char kind;
    private final String text;
    /** What {@link #encode} returns, made once: an allow, judged for most calls, is a constant. */
    private final String encoded;

    private Verdict(char kind, String text) {
        this.kind = kind;
        this.text = text;
        this.encoded = kind + text;
    }

    private static final Verdict ALLOW = new Verdict('A', "");
    private static final Verdict ALLOW_EXPLICITLY = new Verdict('E', "");

    /** Run it (a destructive tool still asks the person, and a baseline concern still denies). */
    public static Verdict allow() {
        return ALLOW;
    }

    /** Run it even though the baseline policy raised a concern; a destructive tool still asks. */
    public static Verdict allowExplicitly() {
        return ALLOW_EXPLICITLY;
    }

    /** Do not run it; {@code reason} goes back to the model. */
    public static Verdict deny(String reason) {
        return new Verdict('D', Objects.requireNonNull(reason, "reason"));
    }

    /** Ask the person through {@link Host#confirm}; with no UI this is a denial. */
    public static Verdict ask(String prompt) {
        return new Verdict('Q', Objects.requireNonNull(prompt, "prompt"));
    }

    public boolean isAllow() {
        return kind == 'A' || kind == 'E';
    }

    public boolean isDeny() {
        return kind == 'D';
    }

    public boolean isAsk() {
        return kind == 'Q';
    }

    /** The reason of a denial or the prompt of an ask; empty for an allow. */
    public String text() {
        return text;
    }

    /** The encoding the native side decodes: one letter, then the text. */
    String encode() {
        return encoded;
    }

    /** What {@link #code()} gives for a guard that returned no verdict at all. */
    static final int NO_VERDICT = -1;

    /** The kind as a number for the library: 0 allow, 1 allow explicitly, 2 deny, 3 ask. */
    int code() {
        switch (kind) {
            case 'A': return 0;
            case 'E': return 1;
            case 'D': return 2;
            default: return 3;
        }
    }

    @Override
    public String toString() {
        switch (kind) {
            case 'A': return "allow";
            case 'E': return "allowExplicitly";
            case 'D': return "deny(" + text + ")";
            default: return "ask(" + text + ")";
        }
    }
}
