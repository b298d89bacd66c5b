package dev.lain.claudejb.mcp.headless;

import java.math.BigDecimal;
import java.util.Map;

/** Typed access to a tool's arguments (already validated against its schema by the library). */
final class Args {
    private final Map<String, Object> values;

    Args(Map<String, Object> values) {
        this.values = values;
    }

    /** A string argument, or {@code null} when absent. */
    String string(String name) throws ToolFailure {
        Object value = values.get(name);
        if (value == null) {
            return null;
        }
        if (!(value instanceof String)) {
            throw new ToolFailure("`" + name + "` must be a string");
        }
        return (String) value;
    }

    String requiredString(String name) throws ToolFailure {
        String value = string(name);
        if (value == null || value.isEmpty()) {
            throw new ToolFailure("`" + name + "` is required");
        }
        return value;
    }

    /** An integer argument in {@code [min, max]}, or {@code fallback} when absent. */
    Integer integer(String name, Integer fallback, int min, int max) throws ToolFailure {
        Object value = values.get(name);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof BigDecimal)) {
            throw new ToolFailure("`" + name + "` must be an integer");
        }
        BigDecimal number = (BigDecimal) value;
        int result;
        try {
            result = number.intValueExact();
        } catch (ArithmeticException e) {
            throw new ToolFailure("`" + name + "` must be an integer between " + min + " and " + max);
        }
        if (result < min || result > max) {
            throw new ToolFailure("`" + name + "` must be between " + min + " and " + max + ", not " + result);
        }
        return result;
    }

    boolean flag(String name) {
        return Boolean.TRUE.equals(values.get(name));
    }
}
