package dev.lain.claudejb.mcp;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/** One tool: its contract with the model and its handler. Build with {@link #builder(String)}. */
public final class Tool {
    private final String name;
    private final String description;
    private final String inputSchema;
    private final boolean readOnly;
    private final boolean destructive;
    private final Duration deadline;
    private final ToolHandler handler;

    private Tool(Builder builder) {
        this.name = builder.name;
        this.description = Objects.requireNonNull(builder.description, "description of tool " + builder.name);
        this.inputSchema = builder.inputSchema;
        this.readOnly = builder.readOnly;
        this.destructive = builder.destructive;
        this.deadline = builder.deadline;
        this.handler = Objects.requireNonNull(builder.handler, "handler of tool " + builder.name);
    }

    /** Starts a tool named {@code name}, as {@code run(tool, args)} will call it. */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    public String name() { return name; }

    public String description() { return description; }

    public String inputSchema() { return inputSchema; }

    public boolean readOnly() { return readOnly; }

    public boolean destructive() { return destructive; }

    /** The tool's own deadline, or {@code null} for the servers' default. */
    public Duration deadline() { return deadline; }

    public ToolHandler handler() { return handler; }

    Map<String, Object> toJsonObject() {
        Map<String, Object> object = new LinkedHashMap<>();
        object.put("name", name);
        object.put("description", description);
        object.put("inputSchema", inputSchema);
        object.put("readOnly", readOnly);
        object.put("destructive", destructive);
        object.put("deadlineMillis", deadline == null ? null : deadline.toMillis());
        return object;
    }

    /** Builds a {@link Tool}. */
    public static final class Builder {
        private final String name;
        private String description;
        private String inputSchema = "{\"type\":\"object\"}";
        private boolean readOnly;
        private boolean destructive;
        private Duration deadline;
        private ToolHandler handler;

        private Builder(String name) {
            this.name = Objects.requireNonNull(name, "name");
        }

        /** What the tool does, for the model. */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        /** A JSON Schema (draft 2020-12) for the arguments; default: any object. */
        public Builder inputSchema(String jsonSchema) {
            this.inputSchema = Objects.requireNonNull(jsonSchema, "jsonSchema");
            return this;
        }

        /** The tool changes nothing. */
        public Builder readOnly() {
            this.readOnly = true;
            return this;
        }

        /** The tool may destroy or overwrite something. */
        public Builder destructive() {
            this.destructive = true;
            return this;
        }

        /** How long a call may run before it is answered with a timeout and cancelled. */
        public Builder deadline(Duration deadline) {
            this.deadline = deadline;
            return this;
        }

        public Builder handler(ToolHandler handler) {
            this.handler = handler;
            return this;
        }

        public Tool build() {
            return new Tool(this);
        }
    }
}
