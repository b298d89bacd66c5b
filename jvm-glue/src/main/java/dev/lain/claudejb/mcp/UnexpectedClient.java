package dev.lain.claudejb.mcp;

import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * A process that connected to the servers although the host did not launch it (nor a
 * descendant of one it launched, nor one covered by an admission credit). What the kernel and
 * {@code /proc} say about it; on systems without {@code /proc}, only the pid.
 */
public final class UnexpectedClient {
    private final int pid;
    private final String executable;
    private final List<String> commandLine;

    UnexpectedClient(int pid, String executable, List<String> commandLine) {
        this.pid = pid;
        this.executable = executable;
        this.commandLine = Collections.unmodifiableList(commandLine);
    }

    /** The process id, from the kernel's peer credentials. */
    public int pid() { return pid; }

    /** The executable's path, when readable. */
    public Optional<String> executable() { return Optional.ofNullable(executable); }

    /** The command line, empty when unreadable. */
    public List<String> commandLine() { return commandLine; }

    @Override
    public String toString() {
        return "pid " + pid + " (" + (executable == null ? "unknown executable" : executable) + ") "
                + String.join(" ", commandLine);
    }
}
