import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { inspectEvents, inspectSession } from "./inspect-session.js";

const actor = { type: "agent", id: "planner" } as const;

/** A recorder of run `runId` of session `sessionId`, its run started. */
async function startedRun(store: MemoryEventStore, sessionId: string, runId: string) {
  const recorder = new SessionRecorder({ store, sessionId, runId, actor });
  await recorder.startRun();
  return recorder;
}

/**
 * A session whose run `main` makes three model calls (an AI SDK response, an OpenAI one with
 * cached input, a stream that failed with partial usage), one with no usage, a tool call, and
 * a child run `sub` with one Anthropic-shaped call.
 */
async function recordSession(store: MemoryEventStore) {
  const main = await startedRun(store, "s", "main");
  const first = await main.beforeModelCall({ request: { model: "m", messages: [] } });
  await main.modelCompleted(first, {
    text: "look it up",
    usage: { inputTokens: 1200, outputTokens: 85 },
  });
  const tool = await main.beforeToolCall({ toolCallId: "t1", name: "lookup", args: {} });
  await main.toolCompleted(tool, { found: true });
  const second = await main.beforeModelCall({ request: { model: "m", messages: [] } });
  await main.modelCompleted(second, {
    choices: [{ message: { role: "assistant", content: "done" } }],
    usage: {
      prompt_tokens: 1500,
      completion_tokens: 40,
      prompt_tokens_details: { cached_tokens: 1024 },
    },
  });
  const cut = await main.beforeModelCall({ request: { model: "m", messages: [] } });
  await main.modelFailed(cut, new Error("stream reset"), {
    partial: { text: "half", usage: { inputTokens: 300, outputTokens: 7 } },
  });
  const silent = await main.beforeModelCall({ request: { model: "m", messages: [] } });
  await main.modelCompleted(silent, { text: "no usage said" });
  const sub = main.child({ runId: "sub", actor: { type: "agent", id: "helper" } });
  await sub.startRun();
  const inner = await sub.beforeModelCall({ request: { model: "claude", messages: [] } });
  await sub.modelCompleted(inner, {
    content: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 50, output_tokens: 9, cache_read_input_tokens: 100 },
  });
  await sub.completeRun("ok");
  await main.completeRun("done");
  return { first, second, cut, silent, tool, inner };
}

describe("inspectSession token usage", () => {
  it("each model call's tokens, each run's own sum, and the session's over every run", async () => {
    const store = new MemoryEventStore();
    const calls = await recordSession(store);
    const inspection = await inspectSession(store, "s");
    const [main] = inspection.runs;
    const attempts = new Map(
      main?.steps.flatMap((step) => step.attempts).map((attempt) => [attempt.attemptId, attempt]),
    );
    expect(attempts.get(calls.first.attemptId)?.usage).toEqual({
      inputTokens: 1200,
      outputTokens: 85,
    });
    expect(attempts.get(calls.second.attemptId)?.usage).toEqual({
      inputTokens: 1500,
      outputTokens: 40,
      cachedTokens: 1024,
    });
    // A failed call counts what its partial response says it used.
    expect(attempts.get(calls.cut.attemptId)?.usage).toEqual({
      inputTokens: 300,
      outputTokens: 7,
    });
    expect(attempts.get(calls.silent.attemptId)).not.toHaveProperty("usage");
    expect(attempts.get(calls.tool.attemptId)).not.toHaveProperty("usage");
    // The run's own calls: its child run's are on the child.
    expect(main?.usage).toEqual({ inputTokens: 3000, outputTokens: 132, cachedTokens: 1024 });
    const sub = main?.children[0];
    // Anthropic counts cache reads beside input_tokens: the input is both.
    expect(sub?.usage).toEqual({ inputTokens: 150, outputTokens: 9, cachedTokens: 100 });
    expect(inspection.usage).toEqual({ inputTokens: 3150, outputTokens: 141, cachedTokens: 1124 });
    // The same from events already read (the inspector every inspection is built with).
    const { events } = await store.readSession({ sessionId: "s", after: 0, limit: 1000 });
    const fromEvents = inspectEvents("s", events);
    expect(fromEvents.usage).toEqual(inspection.usage);
    expect(fromEvents.runs[0]?.usage).toEqual(main?.usage);
  });

  it("a fork's copies of calls made before it carry no tokens: they were spent once, in the source run", async () => {
    const store = new MemoryEventStore();
    const recorder = await startedRun(store, "f", "main");
    const before = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(before, {
      text: "a",
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    await store.fork({
      sessionId: "f",
      runId: "main",
      newRunId: "retry",
      uptoSeq: recorder.length,
    });
    const fork = await SessionRecorder.resume({ store, sessionId: "f", runId: "retry", actor });
    // The fork re-executes: its first call is answered from the copy, then a new one is made.
    const replayed = await fork.beforeModelCall({ request: { model: "m", messages: [] } });
    expect(replayed.replayed).toBeDefined();
    const after = await fork.beforeModelCall({ request: { model: "m", messages: ["again"] } });
    await fork.modelCompleted(after, { text: "b", usage: { inputTokens: 7, outputTokens: 1 } });
    const inspection = await inspectSession(store, "f");
    const runs = new Map(inspection.runs.map((run) => [run.runId, run]));
    const copy = runs.get("retry")?.steps[0]?.attempts[0];
    expect(copy?.attemptId).toBe(before.attemptId);
    expect(copy?.status).toBe("completed");
    expect(copy).not.toHaveProperty("usage");
    expect(runs.get("main")?.usage).toEqual({ inputTokens: 100, outputTokens: 10 });
    expect(runs.get("retry")?.usage).toEqual({ inputTokens: 7, outputTokens: 1 });
    expect(inspection.usage).toEqual({ inputTokens: 107, outputTokens: 11 });
  });

  it("a session whose calls report no tokens has no usage anywhere", async () => {
    const store = new MemoryEventStore();
    const recorder = await startedRun(store, "quiet", "r");
    const call = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(call, { text: "hi" });
    const inFlight = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    const inspection = await inspectSession(store, "quiet");
    expect(inspection).not.toHaveProperty("usage");
    expect(inspection.runs[0]).not.toHaveProperty("usage");
    expect(inspection.unresolved.map((attempt) => attempt.attemptId)).toEqual([inFlight.attemptId]);
    expect(inspection.unresolved[0]).not.toHaveProperty("usage");
  });

  it("a response whose text is kept in the blob store is counted in every mode: the counts stay in place", async () => {
    const store = new MemoryEventStore();
    const recorder = await startedRun(store, "long", "r");
    const call = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(call, {
      text: "a long answer ".repeat(5000),
      usage: { inputTokens: 10, outputTokens: 20000 },
    });
    await recorder.completeRun("done");
    expect((await inspectSession(store, "long")).usage).toEqual({
      inputTokens: 10,
      outputTokens: 20000,
    });
    for (const resolve of ["in-flight", false] as const) {
      const inspection = await inspectSession(store, "long", { resolve });
      expect(inspection.usage, String(resolve)).toEqual({ inputTokens: 10, outputTokens: 20000 });
    }
    // The text was stored as a blob, and is read back only when asked for.
    const raw = await inspectSession(store, "long", { resolve: false });
    expect(JSON.stringify(raw.runs[0]?.steps[0]?.attempts[0]?.outcome)).toContain('"$ledger"');
  });
});
