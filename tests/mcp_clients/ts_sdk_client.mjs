// The MCP TypeScript SDK 1.x client (`@modelcontextprotocol/sdk`) driving one server through a
// stdio bridge, one scenario per run:
//
//   node ts_sdk_client.mjs <scenario> <command> [args...]
//
// <command> [args...] start the bridge (`ide-mcp bridge <dir>/code.sock`), which the SDK's
// StdioClientTransport spawns. The scenario's findings go to stdout as one JSON object, for
// test_typescript_sdk.py to check; the exit status is 0 when the scenario ran to its end (a
// failed expectation is reported in the JSON, not thrown), 1 on anything unexpected. The SDK
// validates every result with its own schemas: a result it rejects (an unknown key in the
// strict `ping` schema, say) throws, and the run exits 1 with the error on stderr.
//
// Scenarios: ping, list, call, errors, progress, cancel.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const TIMEOUT_MS = 20_000;
const DOMAIN = "diagnostics";

const text = (result) => ({ isError: result.isError === true, text: result.content[0].text });
const run = (client, tool, args, options = {}) =>
    client.callTool({ name: "run", arguments: { tool, args } }, undefined, { timeout: TIMEOUT_MS, ...options });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function caught(promise) {
    try {
        return { resolved: await promise };
    } catch (error) {
        return {
            rejected: {
                name: error?.name,
                mcpError: error instanceof McpError,
                code: error?.code,
                message: String(error?.message ?? error),
            },
        };
    }
}

const scenarios = {
    // A strict schema: EmptyResultSchema rejects any key beside _meta.
    async ping(client) {
        return { ping: await client.ping({ timeout: TIMEOUT_MS }) };
    },

    async list(client) {
        const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
        return {
            names: tools.map((tool) => tool.name),
            schemaTypes: tools.map((tool) => tool.inputSchema.type),
            server: client.getServerVersion(),
            capabilities: client.getServerCapabilities(),
        };
    },

    async call(client) {
        const call = (name, args) => client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
        return {
            domains: text(await call("domains", {})),
            tools: text(await call("tools", { domain: DOMAIN })),
            echo: text(await run(client, "echo", { value: "héllo 🎉, world" })),
        };
    },

    async errors(client) {
        return {
            unknownTool: text(await run(client, "no_such_tool", {})),
            fail: text(await run(client, "fail", { message: "boom" })),
            unknownMetaTool: await caught(client.callTool({ name: "no_such_meta_tool", arguments: {} }, undefined, { timeout: TIMEOUT_MS })),
        };
    },

    async progress(client) {
        const updates = [];
        const started = Date.now();
        const result = await run(client, "sleep", { ms: 2500 }, {
            onprogress: (progress) => updates.push({ ...progress, atMs: Date.now() - started }),
        });
        return { result: text(result), updates, replyAtMs: Date.now() - started };
    },

    async cancel(client, errors) {
        const controller = new AbortController();
        const started = Date.now();
        const pending = caught(run(client, "sleep", { ms: 30_000 }, { signal: controller.signal }));
        await sleep(500);
        controller.abort();
        const aborted = await pending;
        const abortedAfterMs = Date.now() - started;
        // A reply to the cancelled call would reach the SDK as a response to an unknown id
        // (reported through onerror): give it a moment to show up.
        await sleep(500);
        return {
            aborted,
            abortedAfterMs,
            ping: await client.ping({ timeout: TIMEOUT_MS }),
            echo: text(await run(client, "echo", { value: "still serving" })),
            errors: errors.map(String),
        };
    },
};

async function main() {
    const [scenario, command, ...args] = process.argv.slice(2);
    if (!scenarios[scenario] || !command) {
        console.error(`usage: node ts_sdk_client.mjs <${Object.keys(scenarios).join("|")}> <command> [args...]`);
        process.exit(2);
    }
    const client = new Client({ name: "ide-mcp-ts-sdk-test", version: "1.0.0" });
    const errors = [];
    client.onerror = (error) => errors.push(error);
    const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
    // What came over the wire, beside what the SDK made of it: the version it negotiated, and
    // the keys of every result (the SDK chains a handler set before connect).
    let protocolVersion = null;
    transport.setProtocolVersion = (version) => { protocolVersion = version; };
    const resultKeys = [];
    transport.onmessage = (message) => { if (message.result) resultKeys.push(Object.keys(message.result)); };
    await client.connect(transport, { timeout: TIMEOUT_MS });
    try {
        const findings = await scenarios[scenario](client, errors);
        process.stdout.write(JSON.stringify({ protocolVersion, resultKeys, ...findings }) + "\n");
    } finally {
        await client.close();
    }
}

main().catch((error) => {
    console.error(error?.stack ?? String(error));
    process.exit(1);
});
