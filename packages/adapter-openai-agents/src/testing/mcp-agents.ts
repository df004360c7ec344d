import { readFileSync } from "node:fs";
import { compiledBeside } from "@agent-ledger/core/testing";
import { Agent, MCPServerStdio } from "@openai/agents";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

// The compiled server, beside this file's compiled copy (tests run after `tsc -b`).
const SERVER = compiledBeside("./mcp-server.js", import.meta.url);

/**
 * The SDK's own stdio MCP client for testing/mcp-server.ts, whose calls land in `log` if given.
 * `afterCall` runs once a call came back from the server (its effect made), before the SDK
 * gets its result: where a crash test dies. Connect it before a run, close it after.
 */
export class ShopMcpServer extends MCPServerStdio {
  afterCall: ((name: string) => void | Promise<void>) | undefined;

  constructor(log?: string) {
    super({ name: "shop", command: process.execPath, args: log ? [SERVER, log] : [SERVER] });
  }

  override async callToolResult(...args: Parameters<MCPServerStdio["callToolResult"]>) {
    const result = await super.callToolResult(...args);
    await this.afterCall?.(args[0]);
    return result;
  }
}

/** The calls the MCP server answered, as its log has them ("lookup book", "charge 7"). */
export function serverCalls(log: string): string[] {
  try {
    return readFileSync(log, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/**
 * "shop", whose tools are those of the MCP server: its model looks the book up, charges 7,
 * then answers "sold". Not connected.
 */
export function mcpShop(log?: string) {
  const server = new ShopMcpServer(log);
  const model = new ScriptedModel([
    () => [functionCall("lookup", { item: "book" }, "call_lookup")],
    () => [functionCall("charge", { amount: 7 }, "call_charge")],
    () => [message("sold")],
  ]);
  const agent = new Agent({ name: "shop", mcpServers: [server] });
  return { server, model, agent };
}
