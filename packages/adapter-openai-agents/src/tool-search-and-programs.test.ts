import { join } from "node:path";
import { type AtifStep, inspectSession, toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { type Agent, type Model, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { runWithLedger } from "./index.js";
import { programAgent, toolSearchAgent } from "./testing/hosted-tool-agents.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// The provider's tool search (`execution: "server"`) and a program it runs (programmatic tool
// calling) are calls of the provider inside a model call, as a web search is: the projections
// show them from the recorded response, run by the provider, and no attempt of the process
// stands for them. The agent's tools that a program calls are the process's calls, as ever.
const scratch = scratchDirectory("oa-tool-search-programs-", { beforeAll, afterAll });
let files = 0;

// biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
async function recorded(made: { agent: Agent<any, any>; model: Model }, finalOutput: string) {
  const store = new SqliteEventStore({ path: join(scratch, `run-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  const run = await runWithLedger(made.agent, "go", runOptions(store, made.model));
  expect(run.finalOutput).toBe(finalOutput);
  return store;
}

function agentSteps(steps: AtifStep[]): AtifStep[] {
  return steps.filter((step) => step.source === "agent");
}

async function attemptsOf(store: SqliteEventStore): Promise<unknown[]> {
  const inspection = await inspectSession(store, "s");
  const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts) ?? [];
  return attempts.map((attempt) => [attempt.kind, attempt.name, attempt.status]);
}

describe("a tool search the provider ran", () => {
  test("ATIF: a call of the step, with the tools it loaded; OpenTelemetry: its execute_tool span", async () => {
    const store = await recorded(toolSearchAgent(), "sunny in Paris");
    expect(await attemptsOf(store)).toEqual([
      ["model", undefined, "completed"],
      ["tool", "forecast", "completed"],
      ["model", undefined, "completed"],
    ]);
    const [asked] = agentSteps((await toAtif(store, "s")).steps);
    expect(asked?.tool_calls?.map((call) => call.function_name)).toEqual([
      "tool_search",
      "forecast",
    ]);
    expect(asked?.tool_calls?.[0]).toEqual({
      tool_call_id: "tsc_1",
      function_name: "tool_search",
      arguments: { paths: [], query: "weather forecast" },
      extra: { executed_by: "provider", item_type: "tool_search_call", status: "completed" },
    });
    const loaded = [{ type: "function", name: "forecast", defer_loading: true }];
    expect(asked?.observation?.results).toEqual([
      {
        source_call_id: "tsc_1",
        content: JSON.stringify(loaded),
        extra: { executed_by: "provider" },
      },
      { source_call_id: "call_forecast", content: "sunny in Paris" },
    ]);

    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const search = spans.filter((span) => span.name === "execute_tool tool_search");
    expect(search).toHaveLength(1);
    expect(search[0]?.attributes).toMatchObject({
      "gen_ai.tool.type": "extension",
      "gen_ai.tool.call.id": "tsc_1",
      "agent_ledger.tool.executed_by": "provider",
      "agent_ledger.tool.item_type": "tool_search_call",
      "gen_ai.tool.call.result": JSON.stringify(loaded),
    });
  });
});

describe("a program the provider ran (programmatic tool calling)", () => {
  test("ATIF: a call of the step that wrote it, its output (from the next response) its result", async () => {
    const made = programAgent();
    const store = await recorded(made, "two teas cost 42");
    expect(made.priced).toEqual(["tea"]);
    // The tool the program called ran in the process: an attempt, as any call of the agent's.
    expect(await attemptsOf(store)).toEqual([
      ["model", undefined, "completed"],
      ["tool", "price", "completed"],
      ["model", undefined, "completed"],
    ]);
    const [asked, answered] = agentSteps((await toAtif(store, "s")).steps);
    expect(asked?.tool_calls?.[0]).toEqual({
      tool_call_id: "call_program",
      function_name: "programmatic_tool_calling",
      arguments: { code: "print(2 * price('tea'))" },
      extra: { executed_by: "provider", item_type: "program", status: "completed" },
    });
    // The call of the agent's tool says the program made it.
    expect(asked?.tool_calls?.[1]).toMatchObject({
      tool_call_id: "call_price",
      function_name: "price",
      extra: { status: "completed", caller_id: "call_program" },
    });
    expect(asked?.observation?.results).toEqual([
      { source_call_id: "call_program", content: "42", extra: { executed_by: "provider" } },
      { source_call_id: "call_price", content: "21" },
    ]);
    expect(answered?.tool_calls).toBeUndefined();

    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const program = spans.filter((span) => span.name === "execute_tool programmatic_tool_calling");
    expect(program).toHaveLength(1);
    expect(program[0]?.attributes).toMatchObject({
      "gen_ai.tool.call.id": "call_program",
      "agent_ledger.tool.executed_by": "provider",
      "agent_ledger.tool.item_type": "program",
      "gen_ai.tool.call.arguments": JSON.stringify({ code: "print(2 * price('tea'))" }),
      // Its output came in the next response, as ATIF's result does.
      "agent_ledger.tool.status": "completed",
      "gen_ai.tool.call.result": JSON.stringify("42"),
    });
    // The process's call of its tool is its own span, which names the program that made it.
    const price = spans.filter((span) => span.name === "execute_tool price");
    expect(price[0]?.attributes).toMatchObject({
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.id": "call_price",
      "agent_ledger.tool.caller_id": "call_program",
    });
  });
});
