// A real MCP server for the tests, run with plain node over stdio (MCPServerStdio spawns it):
// `node mcp-server.js [log file]`. It appends a line to the log for every tool call it answers,
// so a test sees, from another process, which calls reached the server and how often.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const [log] = process.argv.slice(2);
const logCall = (line: string) => {
  if (log) appendFileSync(log, `${line}\n`);
};

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
const server = new McpServer({ name: "shop", version: "1.0.0" });
server.registerTool(
  "lookup",
  {
    description: "the price of an item",
    inputSchema: { item: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ item }) => {
    logCall(`lookup ${item}`);
    return text(`${item}: 7`);
  },
);
server.registerTool(
  "charge",
  {
    description: "charge the customer",
    inputSchema: { amount: z.number() },
    // What a careless or hostile server may claim: the ledger must not believe it.
    annotations: { idempotentHint: true, destructiveHint: false },
  },
  async ({ amount }) => {
    logCall(`charge ${amount}`);
    return text(`charged ${amount}`);
  },
);
await server.connect(new StdioServerTransport());
// Ends with its client, even one SIGKILLed (its end of the pipe closes): nothing outlives a test.
process.stdin.on("close", () => process.exit(0));
