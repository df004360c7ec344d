import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, stepCountIs, streamObject, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import type { CrashScenarioName } from "./testing/crash-scenarios.test.data.js";
import {
  type AskOptions,
  RESEARCH,
  researchModel,
  runResearch,
} from "./testing/research-agent.test.data.js";
import {
  assistant as actor,
  partsStream,
  payload,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

// How a wrapped tool's call ends when an inner call made a child run: the tool's outcome is
// committed first, the child run closed after, so a crash between the two never leaves a
// closed child run under a tool call that runs again.

const scratch = scratchDirectory("ai-sdk-ends-", afterAll);
let crashes = 0;

async function crashInside(scenario: CrashScenarioName) {
  const path = join(scratch, `crash-${++crashes}.db`);
  await crashInChild(scenario, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

async function resumeResearch(store: EventStore, ask: AskOptions = {}) {
  const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
  const { model, calls } = researchModel("single");
  const effects: string[] = [];
  const text = await runResearch({ recorder, variant: "single", model, effects, ...ask });
  return { text, calls, effects };
}

/** The agent's run, and the child run of its (one) research call. */
async function runsOf(store: EventStore) {
  const events = await readWholeSession(store, RESEARCH.sessionId);
  const root = events.filter((event) => event.runId === RESEARCH.runId);
  const child = events.filter((event) => event.runId !== RESEARCH.runId);
  return { root, child };
}

const types = (events: LedgerEvent[]) => events.map((event) => event.type);
const refused = () => {
  throw new Error("downstream API refused");
};

describe("a crash between a tool's outcome and its child run's end", () => {
  it("killed once the child run's end is committed: every resume goes on, the tool answered from the ledger", async () => {
    const store = await crashInside("research, once its child run's end is committed");

    // This time the tool would fail: it does not run again, its outcome is in the ledger.
    const resumed = await resumeResearch(store, { afterParts: async () => refused() });
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);
    const again = await resumeResearch(store, { afterParts: async () => refused() });
    expect(again.text).toBe("summary");
    expect(again.calls).toEqual([]);

    const { root, child } = await runsOf(store);
    expect(root.filter((event) => event.type === "tool.requested")).toHaveLength(1);
    expect(payload(root.find((event) => event.type === "tool.completed"))?.result).toBe("and of a");
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });

  it("killed once the tool's outcome is committed: its child run, left open, is closed on resume", async () => {
    const store = await crashInside("research, once its outcome is committed");
    const before = await runsOf(store);
    // The outcome first: the child run is still open at the crash.
    expect(types(before.child)).toEqual(["run.started", "model.requested", "model.completed"]);
    expect(before.root.at(-1)?.type).toBe("tool.completed");

    const resumed = await resumeResearch(store);
    expect(resumed.text).toBe("summary");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);
    const { child } = await runsOf(store);
    expect(child.at(-1)?.type).toBe("run.completed");
    expect(child.filter((event) => event.type.startsWith("run."))).toHaveLength(2);
  });
});

describe("an inner stream the tool left open", () => {
  it("is recorded as failed, with what it streamed, before the child run closes", async () => {
    const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
    const mock = new MockLanguageModelV3({
      doGenerate: async ({ prompt }) =>
        prompt.at(-1)?.role === "tool"
          ? textResult("done")
          : toolCallsResult(toolCall("c1", "pick", {})),
      doStream: async () => ({
        stream: partsStream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: '{"v":"a' },
          { type: "text-delta", id: "0", delta: 'b"}' },
          { type: "text-end", id: "0" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ] as never),
      }),
    });
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...RESEARCH, actor });
    const model = wrapLanguageModel({ model: mock, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      {
        pick: tool({
          inputSchema: z.object({}),
          execute: async () => {
            const result = streamObject({
              model,
              schema: z.object({ v: z.string() }),
              prompt: "choose",
            });
            for await (const partial of result.partialObjectStream) return partial;
            return undefined;
          },
        }),
      },
      { recorder },
    );
    const { text } = await generateText({ model, tools, prompt: "go", stopWhen: stepCountIs(3) });
    expect(text).toBe("done");

    const { root, child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "run.completed",
    ]);
    const failed = payload(child[2]);
    expect(failed.error.message).toBe("the tool returned before reading the stream to its end");
    expect(JSON.stringify(failed.partial)).toContain('{\\"v\\":\\"a');
    expect(root.find((event) => event.type === "tool.completed")).toBeDefined();
    expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
  });
});
