import {
  inspectSession,
  LedgerError,
  type LedgerEvent,
  MemoryEventStore,
  readWholeRun,
  readWholeSession,
  resolveEvents,
  SessionRecorder,
} from "@agent-ledger/core";
import { Agent, Runner, setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { ledgerModel, ledgerModelProvider } from "./index.js";
import { FailingStore } from "./testing/failing-store.js";
import { invalidArgumentAt } from "./testing/invalid-argument.test.data.js";
import { message, ScriptedModel, scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

const actor = { type: "agent" as const, id: "main" };

async function recorded(store: MemoryEventStore, runId: string): Promise<LedgerEvent[]> {
  return resolveEvents(store, await readWholeRun(store, { sessionId: "s", runId }));
}

// Starts run "r" on `store` and returns a Runner whose model calls `model` answers and run "r"
// records.
async function recordingRunner(store: MemoryEventStore, model: ScriptedModel): Promise<Runner> {
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  return new Runner({
    modelProvider: ledgerModelProvider(scriptedProvider(model), { recorder }),
  });
}

describe("ledgerModelProvider", () => {
  test("records getResponse: request committed first, completion with output and usage", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const model = new ScriptedModel([() => [message("hello")]]);
    let eventsAtCall = -1;
    model.beforeCall = async () => {
      eventsAtCall = (await recorded(store, "r")).length;
    };
    const runner = new Runner({
      modelProvider: ledgerModelProvider(scriptedProvider(model), { recorder }),
      modelSettings: { temperature: 0.2 },
    });
    const agent = new Agent({ name: "main", instructions: "be brief" });
    const result = await runner.run(agent, "hi");
    expect(result.finalOutput).toBe("hello");

    const events = await recorded(store, "r");
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    // model.requested was durable before the model ran.
    expect(eventsAtCall).toBe(2);
    const request =
      (events[1]?.payload as { request: Record<string, unknown> } | undefined)?.request ?? {};
    expect(request.systemInstructions).toBe("be brief");
    expect(request.modelSettings).toMatchObject({ temperature: 0.2 });
    expect(request.input).toEqual([{ type: "message", role: "user", content: "hi" }]);
    expect(request).not.toHaveProperty("signal");
    expect(request).not.toHaveProperty("tracing");
    expect(events[1]?.metadata).toEqual({ stream: false });
    const response =
      (events[2]?.payload as { response: Record<string, unknown> } | undefined)?.response ?? {};
    expect(response.usage).toMatchObject({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(response.output).toEqual([
      expect.objectContaining({
        type: "message",
        content: [{ type: "output_text", text: "hello" }],
      }),
    ]);
    expect(response.responseId).toBe("resp_1");
  });

  test("notes the model name the agent asked for, so inspect can say which model a call went to", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("hello")]]);
    const runner = await recordingRunner(store, model);
    await runner.run(new Agent({ name: "main", model: "gpt-test-1" }), "hi");
    const events = await recorded(store, "r");
    // In the metadata: the request (and its hash, which replay compares) is unchanged.
    expect(events[1]?.metadata).toEqual({ stream: false, model: "gpt-test-1" });
    expect(events[1]?.payload).not.toHaveProperty("request.model");
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.steps[0]?.attempts[0]).toMatchObject({
      kind: "model",
      name: "gpt-test-1",
    });
  });

  test("records getStreamedResponse, completing at response_done", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([() => [message("streamed hello")]]);
    const runner = await recordingRunner(store, model);
    const result = await runner.run(new Agent({ name: "main" }), "hi", { stream: true });
    const seen: string[] = [];
    for await (const event of result) seen.push(event.type);
    await result.completed;
    expect(result.finalOutput).toBe("streamed hello");
    expect(seen).toContain("raw_model_stream_event");
    const events = await recorded(store, "r");
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    expect(events[1]?.metadata).toEqual({ stream: true });
    const response =
      (events[2]?.payload as { response: Record<string, unknown> } | undefined)?.response ?? {};
    expect(response.output).toEqual([
      expect.objectContaining({ content: [{ type: "output_text", text: "streamed hello" }] }),
    ]);
  });

  test("records model.failed when the model throws, and the run rejects", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([]);
    const runner = await recordingRunner(store, model);
    await expect(runner.run(new Agent({ name: "main" }), "hi")).rejects.toThrow(/no turn 1/);
    const inspection = await inspectSession(store, "s");
    const attempt = inspection.runs[0]?.steps[0]?.attempts[0];
    expect(attempt?.status).toBe("failed");
    expect(inspection.unresolved).toEqual([]);
  });

  test("fails closed: when model.requested cannot be committed the model is never called", async () => {
    const store = new FailingStore();
    const model = new ScriptedModel([() => [message("never")]]);
    const runner = await recordingRunner(store, model);
    store.failWhen = () => true;
    await expect(runner.run(new Agent({ name: "main" }), "hi")).rejects.toThrow(/store is down/);
    expect(model.calls).toBe(0);
  });

  test("fails closed in streaming mode too", async () => {
    const store = new FailingStore();
    const model = new ScriptedModel([() => [message("never")]]);
    const runner = await recordingRunner(store, model);
    store.failWhen = () => true;
    const result = await runner.run(new Agent({ name: "main" }), "hi", { stream: true });
    const failure = await (async () => {
      for await (const _event of result) {
        // drain
      }
    })().catch((error: unknown) => error);
    await result.completed.catch(() => undefined);
    expect(String(failure ?? result.error)).toMatch(/store is down/);
    expect(model.calls).toBe(0);
  });

  test("ledgerModel wraps a single Model; without a recorder or scope it refuses to call", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const inner = new ScriptedModel([() => [message("one")], () => [message("two")]]);
    const agent = new Agent({ name: "main", model: ledgerModel(inner, { recorder }) });
    expect((await new Runner().run(agent, "hi")).finalOutput).toBe("one");
    expect(
      (await recorded(store, "r")).filter((event) => event.type === "model.completed"),
    ).toHaveLength(1);

    const unscoped = new Agent({ name: "main", model: ledgerModel(inner) });
    const failure = await new Runner().run(unscoped, "hi").catch((error: unknown) => error);
    expect(LedgerError.isInstance(failure, "invalid-argument")).toBe(true);
    expect(inner.calls).toBe(1);
  });
});

describe("ledgerModel and ledgerModelProvider check their arguments when called", () => {
  test("not a Model or ModelProvider, or bad options: invalid-argument at its path, before any call", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    const inner = new ScriptedModel([() => [message("one")]]);
    const model = ledgerModel as (...args: unknown[]) => unknown;
    const provider = ledgerModelProvider as (...args: unknown[]) => unknown;
    const cases: [() => unknown, string, RegExp][] = [
      [() => model(null), "$.model", /ledgerModel wraps a Model .*, got null/],
      [() => model({ getResponse: () => undefined }), "$.model", /got object/],
      [() => model(inner, 5), "$", /ledgerModel's options are \{ recorder\? \}, got number/],
      [() => model(inner, { recorder: {} }), "$.recorder", /must be a SessionRecorder, got object/],
      [() => model(inner, { recorder, stream: true }), "$.stream", /has no option "stream"/],
      [() => provider(5), "$.provider", /ledgerModelProvider wraps a ModelProvider .*, got number/],
      [() => provider({}), "$.provider", /got object/],
      [() => provider(scriptedProvider(inner), { recorder: {} }), "$.recorder", /SessionRecorder/],
      [() => provider(scriptedProvider(inner), { recoder: recorder }), "$.recoder", /no option/],
    ];
    for (const [call, path, text] of cases)
      expect(call, path).toThrow(invalidArgumentAt(path, text));
    expect(inner.calls).toBe(0);
    expect(await readWholeSession(store, "s")).toEqual([]);
  });
});
