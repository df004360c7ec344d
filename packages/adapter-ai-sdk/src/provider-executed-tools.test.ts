import { join } from "node:path";
import { inspectSession, toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { generateText, tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { assistantRecorder, providerSearchModel } from "./testing/scripted-model.test.data.js";

// A provider-executed tool (a provider's web search) runs inside the model call: its call and
// result are parts of the recorded response, never a call of the app. Projections show it as a
// tool call of that step, run by the provider, not as a call the model asked for that never ran.
const scratch = scratchDirectory("ai-sdk-provider-tools-", { beforeAll, afterAll });
let files = 0;

async function recordedSearch() {
  const store = new SqliteEventStore({ path: join(scratch, `search-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  const { recorder } = assistantRecorder(store, { sessionId: "s", runId: "r" });
  const model = providerSearchModel("weather in Paris", "Sunny.");
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    tools: { web_search: tool({ inputSchema: z.object({ query: z.string() }) }) },
    prompt: "weather in Paris?",
  });
  expect(result.text).toBe("Sunny.");
  return store;
}

describe("a tool the provider executed inside a model call", () => {
  test("ATIF: a tool call of that step, run by the provider, with its result; not 'not-requested'", async () => {
    const store = await recordedSearch();
    const trajectory = await toAtif(store, "s");
    const step = trajectory.steps.find((each) => each.source === "agent");
    expect(step?.tool_calls).toEqual([
      {
        tool_call_id: "ws-1",
        function_name: "web_search",
        arguments: { query: "weather in Paris" },
        extra: { executed_by: "provider", item_type: "tool-call" },
      },
    ]);
    expect(step?.observation?.results).toEqual([
      { source_call_id: "ws-1", content: '{"hits":3}', extra: { executed_by: "provider" } },
    ]);
    // No attempt of the app stands for it.
    const inspection = await inspectSession(store, "s");
    const attempts = inspection.runs[0]?.steps.flatMap((each) => each.attempts) ?? [];
    expect(attempts.map((attempt) => attempt.kind)).toEqual(["model"]);
  });

  test("OpenTelemetry: an execute_tool span under the chat span, an extension run by the provider", async () => {
    const store = await recordedSearch();
    const spans = await exportedSpans(store, "s");
    const search = spans.find((span) => span.name === "execute_tool web_search");
    const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(search?.parentSpanContext?.spanId).toBe(chat?.spanContext().spanId);
    expect(search?.attributes).toMatchObject({
      "gen_ai.tool.name": "web_search",
      "gen_ai.tool.type": "extension",
      "gen_ai.tool.call.id": "ws-1",
      "agent_ledger.tool.executed_by": "provider",
    });
  });
});
