package dev.lain.claudejb.mcp;

/**
 * A child JVM's entry point for {@link NativeLoaderTest}: loads the native library the way a
 * plugin does and prints what happened, so the test can see the loader's own message.
 */
public final class LoaderProbe {
    private LoaderProbe() {
    }

    public static void main(String[] args) {
        try {
            System.out.println("loaded: " + Native.splitModeMessage());
        } catch (Throwable failure) {
            Throwable cause = failure.getCause() != null ? failure.getCause() : failure;
            System.out.println(cause.getClass().getName() + ": " + cause.getMessage());
        }
    }
}
