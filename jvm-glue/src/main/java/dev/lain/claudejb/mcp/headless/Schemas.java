package dev.lain.claudejb.mcp.headless;

import dev.lain.claudejb.mcp.Json;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Small builders for the tools' JSON Schemas. */
final class Schemas {
    /** The schema keyword that tells the library's baseline policy an argument is a path. */
    static final String PATH_KEYWORD = "x-ide-mcp-path";

    private Schemas() {
    }

    /** One property: its name and schema. */
    static final class Property {
        final String name;
        final Map<String, Object> schema;

        Property(String name, Map<String, Object> schema) {
            this.name = name;
            this.schema = schema;
        }
    }

    static List<String> required(String... names) {
        return Arrays.asList(names);
    }

    /** An object schema with these properties and no others. */
    static String object(List<String> required, Property... properties) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        Map<String, Object> props = new LinkedHashMap<>();
        for (Property property : properties) {
            props.put(property.name, property.schema);
        }
        schema.put("properties", props);
        if (!required.isEmpty()) {
            schema.put("required", new ArrayList<>(required));
        }
        schema.put("additionalProperties", false);
        return Json.write(schema);
    }

    static Property string(String name, String description) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "string");
        schema.put("description", description);
        return new Property(name, schema);
    }

    /** A path argument: the library makes it canonical and confines it to the project roots. */
    static Property path(String name, String description) {
        Property property = string(name, description);
        property.schema.put(PATH_KEYWORD, true);
        return property;
    }

    static Property integer(String name, String description, int minimum) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "integer");
        schema.put("minimum", minimum);
        schema.put("description", description);
        return new Property(name, schema);
    }

    static Property integerRange(String name, String description, int minimum, int maximum) {
        Property property = integer(name, description, minimum);
        property.schema.put("maximum", maximum);
        return property;
    }

    static Property bool(String name, String description) {
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "boolean");
        schema.put("description", description);
        return new Property(name, schema);
    }
}
