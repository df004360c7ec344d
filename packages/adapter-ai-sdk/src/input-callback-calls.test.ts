import { join } from "node:path";
import {
  type EventStore,
  InvalidArgumentError,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  ANNOUNCING_RUN as address,
  announcingAgent,
  announcingModel,
} from "./testing/announcing-agent.test.data.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  assistant as actor,
  partsStream,
  payload,
  streamPartsOf,
  textResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-input-callbacks-", { beforeAll, afterAll });

async function sqliteStore(name: string): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, name) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

/** The text a recorded model request asked. */
function askedText(event: Parameters<typeof payload>[0]): string {
  const prompt = payload(event).request.prompt as { content: unknown }[];
  const parts = prompt.flatMap((message) =>
    Array.isArray(message.content) ? message.content : [],
  );
  return parts.find((part) => part.type === "text")?.text ?? "";
}

/** The run's events as `type` (and for model calls, what was asked, and whether a retry). */
async function timeline(store: EventStore) {
  const events = await readWholeRun(store, address);
  return events.map((event) => {
    if (event.type !== "model.requested") return event.type;
    const text = askedText(event);
    const asked = /^(announce|check)/.test(text) ? text.replace(/ tool call c1$/, "") : "agent";
    return `${event.type} (${asked})${event.retryOf ? " retry" : ""}`;
  });
}

const providerCalls = (model: MockLanguageModelV3) =>
  model.doGenerateCalls.length + model.doStreamCalls.length;

/** What the callbacks heard, live: the announcement, then one check per input delta. */
const HEARD = ["Looking up the weather", "ok", "ok"];

/** The run's events up to the agent's first completion, in the order the calls were made. */
const UP_TO_AGENT_COMPLETION = [
  "run.started",
  "model.requested (agent)",
  "model.requested (announce)",
  "model.completed",
  'model.requested (check {"city":)',
  "model.completed",
  'model.requested (check "Paris"})',
  "model.completed",
  "model.completed",
];

describe("a model call a tool's onInputStart / onInputDelta makes while its input streams", () => {
  it("is recorded as the run's next call, and a resume answers it in its place", async () => {
    const store = await sqliteStore("live.db");
    const live = announcingModel();
    expect(await announcingAgent(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
      text: "done",
      heard: HEARD,
      cities: ["Paris"],
      errors: [],
    });
    expect(providerCalls(live)).toBe(5);
    const recorded = await timeline(store);
    expect(recorded).toEqual([
      ...UP_TO_AGENT_COMPLETION,
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);
    // The completion keeps the tool input parts where they came, the deltas as they came.
    const events = await readWholeRun(store, address);
    const completion = events.find(
      (event) => event.type === "model.completed" && payload(event).response.toolInputs,
    );
    expect(payload(completion).response.toolInputs).toEqual([
      { at: 0, type: "tool-input-start", id: "c1", toolName: "weather" },
      { at: 0, type: "tool-input-delta", id: "c1", deltas: ['{"city":', '"Paris"}'] },
      { at: 0, type: "tool-input-end", id: "c1" },
    ]);

    // The replayed stream emits the tool input again: the callbacks run, answered from the ledger.
    const resumed = announcingModel();
    const again = await announcingAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", heard: HEARD, cities: [], errors: [] });
    expect(providerCalls(resumed)).toBe(0);
    expect(await timeline(store)).toEqual(recorded);
  });

  it("after a SIGKILL with the agent's stream open, the resume answers them from the ledger", async () => {
    // The child's announcement and checks are answered and recorded; it dies before the
    // stream's tool-call part.
    const path = join(scratch, "cut-stream.db");
    const crashed = await crashInChild(
      "announced tool input recorded, its stream still open",
      path,
    );
    expect(crashed.modelCalls).toBe(4);
    const store = await sqliteStore("cut-stream.db");
    expect(await timeline(store)).toEqual(UP_TO_AGENT_COMPLETION.slice(0, -1));

    const resumed = announcingModel();
    const again = await announcingAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", heard: HEARD, cities: ["Paris"], errors: [] });
    // The stream cut by the crash is made again; its callbacks' calls are not.
    expect(resumed.doGenerateCalls).toHaveLength(0);
    expect(resumed.doStreamCalls).toHaveLength(2);
    expect(await timeline(store)).toEqual([
      ...UP_TO_AGENT_COMPLETION.slice(0, -1),
      "model.requested (agent) retry",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);
  });

  it("after a SIGKILL inside the tool, the replayed stream runs the callbacks again, answered from the ledger", async () => {
    const path = join(scratch, "inside-tool.db");
    const crashed = await crashInChild("announced tool input, inside the tool", path);
    expect(crashed.modelCalls).toBe(4);
    const store = await sqliteStore("inside-tool.db");
    expect(await timeline(store)).toEqual([...UP_TO_AGENT_COMPLETION, "tool.requested"]);

    const resumed = announcingModel();
    const again = await announcingAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    // Only the tool (idempotent) and the agent's last step run again.
    expect(again).toEqual({ text: "done", heard: HEARD, cities: ["Paris"], errors: [] });
    expect(providerCalls(resumed)).toBe(1);
    expect(await timeline(store)).toEqual([
      ...UP_TO_AGENT_COMPLETION,
      "tool.requested",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);
  });

  it("is refused, saying to pass the tool through wrapTools, when the tool is not wrapped", async () => {
    const store = await sqliteStore("unwrapped.db");
    const model = announcingModel();
    const { text, heard, errors } = await announcingAgent(
      new SessionRecorder({ store, ...address, actor }),
      model,
      { wrap: false },
    );
    expect(text).toBe("done");
    expect(heard).toEqual([]);
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).message).toContain(
        'waited after a tool input part of tool call c1 (tool "weather")',
      );
      expect((error as InvalidArgumentError).message).toContain("pass the tool through wrapTools");
    }
    // Nothing of the refused calls is recorded, and the provider never heard of them.
    expect(providerCalls(model)).toBe(2);
    expect(await timeline(store)).not.toContain("model.requested (announce)");
  });

  it("takes no other call for the callback's: one made outside it meanwhile is refused", async () => {
    const store = await sqliteStore("other-agent.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = announcingModel();
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    // Another agent's call on the same recorder, started (outside the callback) while the
    // stream waits in onInputStart.
    let startOther!: () => void;
    const otherStarts = new Promise<void>((resolve) => {
      startOther = resolve;
    });
    const other = (async () => {
      await otherStarts;
      return generateText({ model: wrapped, prompt: "announce something else" });
    })();
    const result = streamText({
      model: wrapped,
      tools: wrapTools(
        {
          weather: tool({
            inputSchema: z.object({ city: z.string() }),
            onInputStart: async () => {
              startOther();
              await other.catch(() => undefined);
            },
            execute: async ({ city }) => `sunny in ${city}`,
          }),
        },
        { recorder },
      ),
      prompt: "weather in Paris?",
    });
    expect(await result.text).toBe("");
    await expect(other).rejects.toThrow(InvalidArgumentError);
    await expect(other).rejects.toThrow("two agents");
    expect(await timeline(store)).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.completed",
      "tool.requested",
      "tool.completed",
    ]);
  });
});

describe("recorded tool input parts", () => {
  it("come back where they came, and a replay's stream records them alike", async () => {
    const store = await sqliteStore("parts.db");
    const parts = [
      { type: "stream-start" as const, warnings: [] },
      { type: "text-start" as const, id: "t" },
      { type: "text-delta" as const, id: "t", delta: "Let me look." },
      { type: "text-end" as const, id: "t" },
      { type: "tool-input-start" as const, id: "a", toolName: "weather", title: "Weather" },
      { type: "tool-input-delta" as const, id: "a", delta: '{"city":' },
      {
        type: "tool-input-delta" as const,
        id: "a",
        delta: '"Oslo"}',
        providerMetadata: { p: { n: 1 } },
      },
      { type: "tool-input-delta" as const, id: "a", delta: "" },
      // A second call's input streamed between the first's parts (two calls at once).
      { type: "tool-input-start" as const, id: "b", toolName: "weather" },
      { type: "tool-input-delta" as const, id: "b", delta: '{"city":"Rome"}' },
      { type: "tool-input-delta" as const, id: "a", delta: " " },
      { type: "tool-input-end" as const, id: "a" },
      {
        type: "tool-call" as const,
        toolCallId: "a",
        toolName: "weather",
        input: '{"city":"Oslo"}',
      },
      { type: "tool-input-end" as const, id: "b" },
      {
        type: "tool-call" as const,
        toolCallId: "b",
        toolName: "weather",
        input: '{"city":"Rome"}',
      },
      // A tool without input callbacks: its input is the tool-call part's, not kept twice.
      { type: "tool-input-start" as const, id: "c", toolName: "clock" },
      { type: "tool-input-delta" as const, id: "c", delta: "{}" },
      { type: "tool-input-end" as const, id: "c" },
      { type: "tool-call" as const, toolCallId: "c", toolName: "clock", input: "{}" },
      ...streamPartsOf(textResult("")).slice(-1),
    ];
    const run = async (recorder: SessionRecorder) => {
      // Given through wrapTools: the recorder then knows which tools have input callbacks.
      wrapTools(
        {
          weather: tool({
            inputSchema: z.object({ city: z.string() }),
            onInputDelta: () => {},
          }),
          clock: tool({ inputSchema: z.object({}), execute: async () => "noon" }),
        },
        { recorder },
      );
      const model = new MockLanguageModelV3({
        doStream: async () => ({ stream: partsStream(parts) }),
      });
      const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
      const { stream } = await wrapped.doStream({ prompt: [] });
      const seen: unknown[] = [];
      for await (const part of stream) seen.push(part);
      return { seen, calls: providerCalls(model) };
    };
    const live = await run(new SessionRecorder({ store, ...address, actor }));
    const replayed = await run(await SessionRecorder.resume({ store, ...address, actor }));
    expect(replayed.calls).toBe(0);
    const toolInputs = (seen: unknown[]) =>
      seen.filter((part) => /^tool-/.test((part as { type: string }).type));
    // Each part in its place: the interleaved calls in the order they came, every delta as it
    // came, the tool-call parts after the input parts that preceded them.
    expect(toolInputs(live.seen)).toEqual(parts.filter((part) => /^tool-/.test(part.type)));
    expect(toolInputs(replayed.seen)).toEqual(
      toolInputs(live.seen).filter(
        (part) =>
          !/^tool-input/.test((part as { type: string }).type) ||
          (part as { id: string }).id !== "c",
      ),
    );
    const completion = (await readWholeRun(store, address)).find(
      (event) => event.type === "model.completed",
    );
    const kept = payload(completion).response.toolInputs as { id: string }[];
    expect(new Set(kept.map((entry) => entry.id))).toEqual(new Set(["a", "b"]));
  });
});
