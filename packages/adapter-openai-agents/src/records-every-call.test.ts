import { Agent, handoff, hostedMcpTool, shellTool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { instrumentAgent } from "./instrument-agent.js";
import { recordsEveryCall } from "./records-every-call.js";
import { chargeTool } from "./testing/charging-agents.js";

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

  test("a tool the ledger never wraps (a local shell): no, even instrumented", () => {
    const agent = instrumentAgent(new Agent({ name: "ops", tools: [chargeTool([]), shell()] }));
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
});
