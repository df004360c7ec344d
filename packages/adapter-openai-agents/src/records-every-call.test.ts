import {
  Agent,
  attachClientToolSearchExecutor,
  type HostedTool,
  handoff,
  hostedMcpTool,
  MCPServerStdio,
  shellTool,
  toolSearchTool,
} from "@openai/agents";
import { describe, expect, test } from "vitest";
import { instrumentAgent } from "./instrument-agent.js";
import { recordsEveryCall } from "./records-every-call.js";
import { chargeTool } from "./testing/charging-agents.js";

// An MCP server never connected: its tools are not listed here.
const mcpServer = () => new MCPServerStdio({ command: "node", args: ["never-run.js"] });

// The shell tool's local runner: never called here.
const shell = () =>
  shellTool({
    shell: {
      run: async () => ({ output: [] }),
    },
  });

describe("recordsEveryCall: whether an agent's run records every call it makes", () => {
  test("an instrumented agent: yes, its hosted tools (run inside a recorded model call) too", () => {
    const agent = instrumentAgent(
      new Agent({
        name: "shop",
        tools: [
          chargeTool([]),
          hostedMcpTool({ serverLabel: "repo", serverUrl: "https://mcp.invalid" }),
        ],
      }),
    );
    expect(recordsEveryCall(agent)).toBe(true);
  });

  test("an agent never instrumented: no, its function tools run unseen", () => {
    expect(recordsEveryCall(new Agent({ name: "shop", tools: [chargeTool([])] }))).toBe(false);
  });

  test("a plain tool given after instrumentAgent: no", () => {
    const agent = instrumentAgent(new Agent({ name: "shop", tools: [chargeTool([])] }));
    agent.tools.push(chargeTool([]));
    expect(recordsEveryCall(agent)).toBe(false);
  });

  test("an agent with MCP servers: yes once instrumented (their tools are wrapped as listed), no before", () => {
    const agent = new Agent({ name: "shop", mcpServers: [mcpServer()] });
    expect(recordsEveryCall(agent)).toBe(false);
    instrumentAgent(agent);
    expect(recordsEveryCall(agent)).toBe(true);
    // A copy made afterwards is instrumented as it is made.
    expect(recordsEveryCall(agent.clone({ name: "copy" }))).toBe(true);
  });

  test("an instrumented agent whose getMcpTools is replaced afterwards: no, its MCP tools run unseen", () => {
    const agent = instrumentAgent(new Agent({ name: "shop", mcpServers: [mcpServer()] }));
    agent.getMcpTools = Agent.prototype.getMcpTools;
    expect(recordsEveryCall(agent)).toBe(false);
  });

  test("a local shell: yes once instrumented (its commands are recorded), no when added after", () => {
    const agent = instrumentAgent(new Agent({ name: "ops", tools: [chargeTool([]), shell()] }));
    expect(recordsEveryCall(agent)).toBe(true);
    agent.tools.push(shell());
    expect(recordsEveryCall(agent)).toBe(false);
  });

  test("a handoff target added after instrumentAgent, with a plain tool: no", () => {
    const agent = instrumentAgent(new Agent({ name: "front", tools: [chargeTool([])] }));
    const billing = new Agent({ name: "billing", tools: [chargeTool([])] });
    agent.handoffs.push(handoff(billing));
    expect(recordsEveryCall(agent)).toBe(false);
    instrumentAgent(billing);
    // The handoff object itself is not wrapped yet: a callback of its own would run unseen.
    expect(recordsEveryCall(agent)).toBe(false);
    instrumentAgent(agent);
    expect(recordsEveryCall(agent)).toBe(true);
  });

  test("a client tool search with an execute: yes once instrumented (each search is recorded), no when added after", () => {
    const search = () => toolSearchTool({ execution: "client", execute: async () => [] });
    const agent = instrumentAgent(new Agent({ name: "shop", tools: [search()] }));
    expect(recordsEveryCall(agent)).toBe(true);
    agent.tools.push(search());
    expect(recordsEveryCall(agent)).toBe(false);
    // Given another execute after instrumentAgent: that one runs unseen, until instrumented.
    const other = instrumentAgent(new Agent({ name: "other", tools: [search()] }));
    attachClientToolSearchExecutor(other.tools[0] as HostedTool, async () => []);
    expect(recordsEveryCall(other)).toBe(false);
    instrumentAgent(other);
    expect(recordsEveryCall(other)).toBe(true);
    // The built-in lookup (no execute) reads only the agent's own tools: nothing unseen.
    expect(
      recordsEveryCall(new Agent({ name: "a", tools: [toolSearchTool({ execution: "client" })] })),
    ).toBe(true);
  });
});
