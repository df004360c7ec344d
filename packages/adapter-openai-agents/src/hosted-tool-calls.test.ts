import { join } from "node:path";
import { type EventStore, inspectSession, toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { setTracingDisabled } from "@openai/agents";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { runWithLedger } from "./index.js";
import { GENERATED_PNG, hostedToolsAgent, travelAgent } from "./testing/hosted-tool-agents.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

// A hosted tool (web search, file search, code interpreter, image generation, a hosted MCP
// server's tool) runs inside the model call, at the provider: its call is an item of the
// recorded response, never a call of the agent's process. Projections show it as a tool call of
// that model call's step, run by the provider.
const scratch = scratchDirectory("oa-hosted-tools-", { beforeAll, afterAll });
let files = 0;

async function sqliteStore() {
  const store = new SqliteEventStore({ path: join(scratch, `hosted-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

async function recordedTravel(stream: boolean) {
  const store = await sqliteStore();
  const made = travelAgent();
  const options = { store, sessionId: "s", modelProvider: scriptedProvider(made.model) };
  if (stream) {
    const run = await runWithLedger(made.agent, "book me a sunny city", {
      ...options,
      stream: true,
    });
    for await (const _event of run.stream) {
      // read the stream to its end
    }
    expect((await run.done).finalOutput).toBe("Paris is sunny: booked");
  } else {
    const run = await runWithLedger(made.agent, "book me a sunny city", options);
    expect(run.finalOutput).toBe("Paris is sunny: booked");
  }
  expect(made.booked).toEqual(["Paris"]);
  return store;
}

const WEB_SEARCH = {
  tool_call_id: "ws_1",
  function_name: "web_search",
  arguments: { action: { type: "search", query: "weather in Paris this weekend" } },
  extra: { executed_by: "provider", item_type: "web_search_call", status: "completed" },
};

function byName(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name);
  expect(found, name).toHaveLength(1);
  return found[0] as ReadableSpan;
}

/** The event holding the model call's response (and the generated image's bytes). */
async function responseEvent(store: EventStore) {
  const { events } = await store.readSession({ sessionId: "s" });
  return events.find((event) => event.type === "model.completed");
}

describe("a web search the provider ran inside a model call", () => {
  test.each([
    ["a run", false],
    ["a streamed run", true],
  ])("%s: ATIF shows it as a tool call of that step, run by the provider", async (_, stream) => {
    const store = await recordedTravel(stream);
    const trajectory = await toAtif(store, "s");
    const agentSteps = trajectory.steps.filter((step) => step.source === "agent");
    expect(agentSteps).toHaveLength(2);
    const [asked] = agentSteps;
    // Before the call the agent's process made (it ran first, inside the model call).
    expect(asked?.tool_calls?.map((call) => call.function_name)).toEqual(["web_search", "book"]);
    expect(asked?.tool_calls?.[0]).toEqual(WEB_SEARCH);
    expect(asked?.tool_calls?.[1]?.extra).toMatchObject({ status: "completed" });
    // The search's results stay with the provider: the only result is the booking's.
    expect(asked?.observation?.results).toEqual([
      { source_call_id: "call_book", content: "booked Paris" },
    ]);
  });

  test("inspection lists the process's calls only: the search is no attempt, and nothing is in flight", async () => {
    const store = await recordedTravel(false);
    const inspection = await inspectSession(store, "s");
    const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts) ?? [];
    expect(attempts.map((attempt) => [attempt.kind, attempt.name, attempt.status])).toEqual([
      ["model", undefined, "completed"],
      ["tool", "book", "completed"],
      ["model", undefined, "completed"],
    ]);
    expect(inspection.unresolved).toEqual([]);
  });

  test("OpenTelemetry: an execute_tool span under the chat span it ran in, marked as the provider's", async () => {
    const store = await recordedTravel(false);
    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const search = byName(spans, "execute_tool web_search");
    const chats = spans.filter((span) => span.name.startsWith("chat"));
    expect(chats).toHaveLength(2);
    const chat = chats.find(
      (span) => span.spanContext().spanId === search.parentSpanContext?.spanId,
    );
    expect(chat).toBeDefined();
    expect(search.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "web_search",
      "gen_ai.tool.type": "extension",
      "gen_ai.tool.call.id": "ws_1",
      "agent_ledger.tool.executed_by": "provider",
      "agent_ledger.tool.status": "completed",
      "gen_ai.tool.call.arguments": JSON.stringify(WEB_SEARCH.arguments),
      "gen_ai.conversation.id": "s",
    });
    // No ledger attempt stands for it; no result came back to show.
    expect(search.attributes["agent_ledger.attempt.id"]).toBeUndefined();
    expect(search.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    // It ran within the model call: the response says no more of when.
    expect(search.startTime).toEqual(chat?.startTime);
    expect(search.endTime).toEqual(chat?.endTime);
    // The tool the process ran is still its own span, a function.
    expect(byName(spans, "execute_tool book").attributes).toMatchObject({
      "gen_ai.tool.type": "function",
      "gen_ai.tool.call.id": "call_book",
    });
    expect(byName(spans, "execute_tool book").attributes["agent_ledger.tool.executed_by"]).toBe(
      undefined,
    );
  });
});

describe("the other hosted tools", () => {
  async function recorded() {
    const store = await sqliteStore();
    const made = hostedToolsAgent();
    const run = await runWithLedger(made.agent, "go", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(made.model),
    });
    expect(run.finalOutput).toBe("done");
    return store;
  }

  test("ATIF: each call with its arguments and what it gave; the MCP server's tool listing is no call", async () => {
    const store = await recorded();
    // The hosted shell's command ran at the provider: no attempt of the process stands for it.
    const inspection = await inspectSession(store, "s");
    const attempts = inspection.runs[0]?.steps.flatMap((each) => each.attempts) ?? [];
    expect(attempts.map((attempt) => attempt.kind)).toEqual(["model"]);
    const trajectory = await toAtif(store, "s");
    const step = trajectory.steps.find((each) => each.source === "agent");
    const completedEvent = await responseEvent(store);
    expect(step?.tool_calls).toEqual([
      {
        tool_call_id: "fs_1",
        function_name: "file_search",
        arguments: { queries: ["refund policy"] },
        extra: { executed_by: "provider", item_type: "file_search_call", status: "completed" },
      },
      {
        tool_call_id: "ci_1",
        function_name: "code_interpreter",
        arguments: { code: "print(6 * 7)", container_id: "cntr_1" },
        extra: { executed_by: "provider", item_type: "code_interpreter_call", status: "completed" },
      },
      {
        tool_call_id: "ig_1",
        function_name: "image_generation",
        arguments: { revised_prompt: "a red dot", output_format: "png" },
        extra: { executed_by: "provider", item_type: "image_generation_call", status: "completed" },
      },
      {
        tool_call_id: "mcp_1",
        function_name: "list_branches",
        arguments: { repo: "ledger" },
        extra: {
          executed_by: "provider",
          item_type: "mcp_call",
          status: "completed",
          server_label: "repo",
        },
      },
      {
        tool_call_id: "call_sh",
        function_name: "shell",
        arguments: { commands: ["ls"] },
        extra: { executed_by: "provider", item_type: "shell_call", status: "completed" },
      },
    ]);
    expect(step?.observation?.results).toEqual([
      {
        source_call_id: "fs_1",
        content: JSON.stringify([
          { file_id: "file_1", filename: "policy.md", score: 0.9, text: "30 days" },
        ]),
        extra: { executed_by: "provider" },
      },
      {
        source_call_id: "ci_1",
        content: JSON.stringify([{ type: "logs", logs: "42\n" }]),
        extra: { executed_by: "provider" },
      },
      {
        // The image's bytes are not copied: named, with the event that holds them.
        source_call_id: "ig_1",
        content: [{ type: "text", text: "[image omitted: image/png, 70 bytes]" }],
        extra: {
          executed_by: "provider",
          images_omitted: [
            {
              part: 0,
              media_type: "image/png",
              size_bytes: 70,
              reason: "bytes recorded in the ledger",
              event_id: completedEvent?.eventId,
            },
          ],
        },
      },
      {
        source_call_id: "mcp_1",
        content: "repository not found",
        extra: { executed_by: "provider", error: "repository not found" },
      },
      {
        source_call_id: "call_sh",
        content: JSON.stringify([
          { stdout: "a.txt\n", stderr: "", outcome: { type: "exit", exitCode: 0 } },
        ]),
        extra: { executed_by: "provider" },
      },
    ]);
    expect(Buffer.from(GENERATED_PNG, "base64")).toHaveLength(70);
  });

  test("OpenTelemetry: a file search is a datastore, the others extensions; the MCP call that failed there is an error", async () => {
    const store = await recorded();
    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const tools = spans.filter((span) => span.name.startsWith("execute_tool"));
    expect(tools.map((span) => [span.name, span.attributes["gen_ai.tool.type"]]).sort()).toEqual([
      ["execute_tool code_interpreter", "extension"],
      ["execute_tool file_search", "datastore"],
      ["execute_tool image_generation", "extension"],
      ["execute_tool list_branches", "extension"],
      ["execute_tool shell", "extension"],
    ]);
    const mcp = byName(spans, "execute_tool list_branches");
    expect(mcp.attributes).toMatchObject({
      "error.type": "failed",
      "agent_ledger.tool.server_label": "repo",
    });
    expect(mcp.status).toEqual({ code: 2, message: "repository not found" });
    // A generated image's bytes are never put in an attribute: named as includeMessages names
    // a file's, with the event (the model call's completion) that holds them.
    const completedEvent = await responseEvent(store);
    const image = byName(spans, "execute_tool image_generation");
    expect(JSON.parse(String(image.attributes["gen_ai.tool.call.result"]))).toEqual({
      type: "agent_ledger.blob_omitted",
      modality: "image",
      mime_type: "image/png",
      size_bytes: 70,
      event_id: completedEvent?.eventId,
    });
    expect(byName(spans, "execute_tool file_search").attributes["gen_ai.tool.call.result"]).toBe(
      JSON.stringify([{ file_id: "file_1", filename: "policy.md", score: 0.9, text: "30 days" }]),
    );
  });
});
