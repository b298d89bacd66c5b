package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

public class DefaultLogSinkTest {
    @Test
    public void withNoSinkSetTheLibraryLogsToJavaUtilLoggingUnderThePackageName() throws Exception {
        // A fresh JVM: in this one, other tests have set and cleared sinks of their own.
        String classpath = TestSupport.mainClasspath() + File.pathSeparator
                + new File(DefaultLogProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ProcessBuilder builder = new ProcessBuilder(TestSupport.javaCommand(classpath,
                Arrays.asList("-Dide.mcp.native.library=" + System.getProperty("ide.mcp.native.library")),
                DefaultLogProbe.class.getName()));
        builder.redirectError(ProcessBuilder.Redirect.INHERIT);
        Process probe = builder.start();
        String line;
        try (BufferedReader stdout = new BufferedReader(new InputStreamReader(probe.getInputStream(), StandardCharsets.UTF_8))) {
            line = stdout.readLine();
        }
        assertTrue(probe.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, probe.exitValue());
        assertTrue(line, line != null && line.startsWith(LogSink.LOGGER_NAME + " INFO "));
        assertTrue(line, line.contains(Contract.READY_LINE_PREFIX));
    }

    @Test
    public void theLevelsMapOntoJavaUtilLogging() {
        assertEquals(java.util.logging.Level.SEVERE, JavaUtilLoggingSink.julLevel(LogSink.Level.ERROR));
        assertEquals(java.util.logging.Level.WARNING, JavaUtilLoggingSink.julLevel(LogSink.Level.WARN));
        assertEquals(java.util.logging.Level.INFO, JavaUtilLoggingSink.julLevel(LogSink.Level.INFO));
        assertEquals(java.util.logging.Level.FINE, JavaUtilLoggingSink.julLevel(LogSink.Level.DEBUG));
        assertEquals(java.util.logging.Level.FINEST, JavaUtilLoggingSink.julLevel(LogSink.Level.TRACE));
    }
}
