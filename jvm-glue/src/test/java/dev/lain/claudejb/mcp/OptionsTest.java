package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.Test;

/**
 * The options of {@link IdeMcpServers.Options.Builder} and the Rust {@code ServerConfig}
 * options ({@code OPTIONS} in {@code rust/server/src/config.rs}) are the same set: an option
 * added on one side only fails here. Each builder method sets one key, its own name (plus
 * {@code Millis} when it takes a {@link Duration}); the defaults live only in Rust.
 */
public class OptionsTest {
    /** Builder methods that wire the JNI side rather than set a server option. */
    private static final Set<String> NOT_OPTIONS = Set.of("defaultBases", "base", "guard", "host", "build");

    @Test
    public void theBuilderAndTheRustConfigHaveTheSameOptions() throws Exception {
        Set<String> builder = new TreeSet<>();
        for (Method method : IdeMcpServers.Options.Builder.class.getDeclaredMethods()) {
            if (!Modifier.isPublic(method.getModifiers()) || NOT_OPTIONS.contains(method.getName())) {
                continue;
            }
            IdeMcpServers.Options.Builder fresh = IdeMcpServers.Options.builder();
            method.invoke(fresh, sampleArgument(method));
            Set<String> keys = fresh.optionKeys();
            assertEquals(method + " must set exactly one option", 1, keys.size());
            String key = keys.iterator().next();
            boolean duration = method.getParameterTypes()[0] == Duration.class;
            String unit = !duration ? "" : key.endsWith("Micros") ? "Micros" : "Millis";
            assertEquals(method + " sets the option named after it", method.getName() + unit, key);
            builder.add(key);
        }
        Set<String> rust = new TreeSet<>();
        for (Object key : (List<?>) Json.parse(Native.optionKeys())) {
            rust.add((String) key);
        }
        assertEquals("IdeMcpServers.Options.Builder and ServerConfig's OPTIONS must have the same keys", rust, builder);
    }

    @Test
    public void anUnsetOptionIsNotSent() {
        IdeMcpServers.Options options = IdeMcpServers.Options.builder()
                .base(Paths.get("/tmp"))
                .guard(SecurityGuard.allowAll())
                .build();
        assertEquals("{\"bases\":[\"/tmp\"],\"hostCanConfirm\":false}", options.toJson());
    }

    @Test
    public void theSocketLookIsSentInMicrosecondsAndAnOverlongOneIsRefused() {
        IdeMcpServers.Options options = IdeMcpServers.Options.builder()
                .base(Paths.get("/tmp"))
                .guard(SecurityGuard.allowAll())
                .socketLook(Duration.ofNanos(20_900))
                .build();
        assertTrue(options.toJson(), options.toJson().contains("\"socketLookMicros\":20"));
        try {
            Native.start("{\"bases\":[\"/tmp\"],\"socketLookMicros\":1001}", SecurityGuard.allowAll(), null);
            throw new AssertionError("a look over a millisecond was accepted");
        } catch (IllegalArgumentException expected) {
            String message = expected.getMessage();
            assertTrue(message, message.contains("socketLookMicros"));
            assertTrue(message, message.contains("0 to 1000"));
        }
    }

    @Test
    public void anUnknownOptionIsRefusedWithTheKnownOnesListed() {
        try {
            Native.start("{\"bases\":[\"/tmp\"],\"queueDepht\":3}", SecurityGuard.allowAll(), null);
            throw new AssertionError("an unknown option was accepted");
        } catch (IllegalArgumentException expected) {
            String message = expected.getMessage();
            assertTrue(message, message.contains("queueDepht"));
            for (Object key : (List<?>) Json.parse(Native.optionKeys())) {
                assertTrue(message, message.contains((String) key));
            }
        }
    }

    private static Object sampleArgument(Method method) {
        Class<?> type = method.getParameterTypes()[0];
        if (type == Duration.class) {
            return Duration.ofMillis(7);
        }
        if (type == int.class) {
            return 7;
        }
        if (type == boolean.class) {
            return false;
        }
        if (type == String.class) {
            return "IDE";
        }
        if (type == List.class) {
            List<Path> roots = new ArrayList<>();
            roots.add(Paths.get("/p"));
            return roots;
        }
        if (type == Path[].class) {
            return new Path[] {Paths.get("/p")};
        }
        throw new AssertionError(method + " takes a " + type + ": teach OptionsTest a sample of it");
    }
}
