package dev.lain.claudejb.mcp;

import static org.junit.Assert.assertEquals;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.Test;

/**
 * {@link Contract} is the Java copy of {@code rust/protocol/src/contract.rs}: the same names
 * with the same values, compared through the native library. A constant added, removed or
 * changed on one side only fails here.
 */
public class ContractTest {
    @Test
    public void javaAndRustAgreeOnEveryConstant() throws Exception {
        Map<String, Object> java = new TreeMap<>();
        for (Field field : Contract.class.getDeclaredFields()) {
            int modifiers = field.getModifiers();
            if (Modifier.isPublic(modifiers) && Modifier.isStatic(modifiers)) {
                java.put(field.getName(), asJson(field.get(null)));
            }
        }
        Map<String, Object> rust = new TreeMap<>();
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) Json.parse(Native.contractJson())).entrySet()) {
            rust.put((String) entry.getKey(), asJson(entry.getValue()));
        }
        assertEquals("Contract.java and rust/protocol/src/contract.rs must hold the same constants",
                rust, java);
    }

    @Test
    public void socketFilesFollowTheServers() {
        for (Server server : Server.values()) {
            assertEquals(server.wireName() + ".sock", server.socketFileName());
        }
    }

    /** Numbers compared as longs, lists as lists, whatever their Java or JSON type. */
    private static Object asJson(Object value) {
        if (value instanceof Number) {
            return ((Number) value).longValue();
        }
        if (value instanceof List) {
            return List.copyOf((List<?>) value);
        }
        return value;
    }
}
