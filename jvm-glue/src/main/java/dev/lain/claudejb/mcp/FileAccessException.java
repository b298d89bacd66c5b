package dev.lain.claudejb.mcp;

/**
 * {@link ConfinedFiles} refused: the path leads outside the project or does not exist, the
 * file is not a regular text file or is too large, the credential rule withholds it, or the
 * pattern or glob is invalid. The message names the path as given and says what to do; it is
 * meant to go back to the model as the tool's error.
 */
@CalledFromNative
public class FileAccessException extends McpException {
    private static final long serialVersionUID = 1L;

    public FileAccessException(String message) {
        super(message);
    }
}
