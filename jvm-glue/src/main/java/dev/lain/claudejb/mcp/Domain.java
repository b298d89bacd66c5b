package dev.lain.claudejb.mcp;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** A named group of tools on one server, e.g. {@code files} on {@link Server#CODE}. */
public final class Domain {
    private final String name;
    private final String description;
    private final Server server;
    private final List<Tool> tools;

    private Domain(Builder builder) {
        this.name = builder.name;
        this.server = builder.server;
        this.description = Objects.requireNonNull(builder.description, "description of domain " + builder.name);
        this.tools = Collections.unmodifiableList(new ArrayList<>(builder.tools));
    }

    /** Starts a domain named {@code name} served on {@code server}. */
    public static Builder builder(String name, Server server) {
        return new Builder(name, server);
    }

    public String name() { return name; }

    public String description() { return description; }

    public Server server() { return server; }

    public List<Tool> tools() { return tools; }

    String toJson() {
        Map<String, Object> object = new LinkedHashMap<>();
        object.put("name", name);
        object.put("description", description);
        object.put("server", server.wireName());
        List<Object> toolObjects = new ArrayList<>();
        for (Tool tool : tools) {
            toolObjects.add(tool.toJsonObject());
        }
        object.put("tools", toolObjects);
        return Json.write(object);
    }

    Object[] handlers() {
        Object[] handlers = new Object[tools.size()];
        for (int i = 0; i < handlers.length; i++) {
            handlers[i] = tools.get(i).handler();
        }
        return handlers;
    }

    /** Builds a {@link Domain}. */
    public static final class Builder {
        private final String name;
        private final Server server;
        private String description;
        private final List<Tool> tools = new ArrayList<>();

        private Builder(String name, Server server) {
            this.name = Objects.requireNonNull(name, "name");
            this.server = Objects.requireNonNull(server, "server");
        }

        /** One line that tells a model what the domain is for. */
        public Builder description(String description) {
            this.description = description;
            return this;
        }

        public Builder tool(Tool tool) {
            tools.add(Objects.requireNonNull(tool, "tool"));
            return this;
        }

        public Domain build() {
            return new Domain(this);
        }
    }
}
