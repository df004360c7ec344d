import { join } from "node:path";
import {
  type EventStore,
  InvalidArgumentError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import { JUDGING_RUN, refundAgent, refundModel } from "./testing/judging-agent.test.data.js";
import {
  REPAIRING_RUN as address,
  repairingAgent,
  repairingModel,
} from "./testing/repairing-agent.test.data.js";
import {
  assistant as actor,
  partsStream,
  payload,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const providerCalls = (model: MockLanguageModelV3) =>
  model.doGenerateCalls.length + model.doStreamCalls.length;

const scratch = scratchDirectory("ai-sdk-callbacks-", { beforeAll, afterAll });

async function sqliteStore(name: string): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, name) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

/** Answers a judge's question with "no", a prompt holding a tool result with "done", else a refund. */
function judgedModel() {
  const answer = ({ prompt }: LanguageModelV3CallOptions) => {
    if (JSON.stringify(prompt).includes("risky?")) return textResult("no");
    if (prompt.some((message) => message.role === "tool")) return textResult("done");
    return toolCallsResult(toolCall("c1", "refund", { amount: 5 }));
  };
  return new MockLanguageModelV3({
    doStream: async (options) => ({ stream: partsStream(streamPartsOf(answer(options))) }),
  });
}

/** The run's events as `type` (and for model calls, what was asked, and whether a retry). */
async function timeline(store: EventStore, run = address) {
  const events = await readWholeRun(store, run);
  return events.map((event) => {
    if (event.type !== "model.requested") return event.type;
    const prompt = JSON.stringify(payload(event).request.prompt);
    const asked = /repair|risky\?|other agent/.exec(prompt)?.[0] ?? "agent";
    return `${event.type} (${asked})${event.retryOf ? " retry" : ""}`;
  });
}

describe("a model call streamText's callbacks make at a tool-call part", () => {
  it("records the repair call as the run's next call, and replays it on resume", async () => {
    const store = new MemoryEventStore();
    const live = repairingModel();
    expect(await repairingAgent(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
      text: "done",
      cities: ["Paris"],
      errors: [],
    });
    const recorded = await timeline(store);
    expect(recorded).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (repair)",
      "model.completed",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);

    const resumed = repairingModel();
    const again = await repairingAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", cities: [], errors: [] });
    expect(resumed.doStreamCalls.length + resumed.doGenerateCalls.length).toBe(0);
    expect(await timeline(store)).toEqual(recorded);
  });

  it("replays the repair after a crash that left the agent's stream open, and goes on", async () => {
    // The child's repair call is answered and recorded, then it dies before the finish part.
    const path = join(scratch, "repair.db");
    const crashed = await crashInChild("repair answered, its stream still open", path);
    expect(crashed.modelCalls).toBe(2);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    expect(await timeline(store)).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (repair)",
      "model.completed",
    ]);

    const resumed = repairingModel();
    const again = await repairingAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", cities: ["Paris"], errors: [] });
    // The stream cut by the crash is made again; the repair is answered from the ledger.
    expect(resumed.doGenerateCalls).toHaveLength(0);
    expect(resumed.doStreamCalls).toHaveLength(2);
    expect(await timeline(store)).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (repair)",
      "model.completed",
      "model.requested (agent) retry",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ]);
  });

  /** The agent, streaming, whose refund tool asks the same model (streaming too) if it is risky. */
  async function judgedAgent(recorder: SessionRecorder, model: MockLanguageModelV3) {
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const refunds: number[] = [];
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapped,
      tools: wrapTools(
        {
          refund: tool({
            inputSchema: z.object({ amount: z.number() }),
            needsApproval: async ({ amount }) =>
              (await streamText({ model: wrapped, prompt: `is a refund of ${amount} risky?` })
                .text) === "yes",
            execute: async ({ amount }) => {
              refunds.push(amount);
              return "refunded";
            },
          }),
        },
        { recorder },
      ),
      prompt: "refund 5",
      stopWhen: stepCountIs(3),
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    return { text: await result.text, refunds, errors };
  }

  it("records a needsApproval judge's call the same way, and replays it on resume", async () => {
    const store = new MemoryEventStore();
    const live = judgedModel();
    expect(await judgedAgent(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
      text: "done",
      refunds: [5],
      errors: [],
    });
    const recorded = await timeline(store);
    expect(recorded.slice(0, 5)).toEqual([
      "run.started",
      "model.requested (agent)",
      "model.requested (risky?)",
      "model.completed",
      "model.completed",
    ]);

    const resumed = judgedModel();
    const again = await judgedAgent(
      await SessionRecorder.resume({ store, ...address, actor }),
      resumed,
    );
    expect(again).toEqual({ text: "done", refunds: [], errors: [] });
    expect(resumed.doStreamCalls).toHaveLength(0);
    expect(await timeline(store)).toEqual(recorded);
  });
});

/** The run's events with a judge's call in the agent's stream, the stream answered last. */
const judged = (store: EventStore) => timeline(store, JUDGING_RUN);

const JUDGED = [
  "run.started",
  "model.requested (agent)",
  "model.requested (risky?)",
  "model.completed",
  "model.completed",
  "tool.requested",
  "tool.completed",
  "model.requested (agent)",
  "model.completed",
];

describe("a model call made at a tool-call part, in a wrapped tool's needsApproval / onInputAvailable", () => {
  for (const callback of ["needsApproval", "onInputAvailable"] as const) {
    it(`is recorded as the stream's (${callback}), and a resume answers it in its place`, async () => {
      const store = await sqliteStore(`judged-${callback}.db`);
      const live = refundModel();
      expect(
        await refundAgent(new SessionRecorder({ store, ...JUDGING_RUN, actor }), live, {
          callback,
        }),
      ).toEqual({ text: "done", refunds: [5], heard: ["no"], errors: [] });
      expect(providerCalls(live)).toBe(3);
      expect(await judged(store)).toEqual(JUDGED);

      const resumed = refundModel();
      const again = await refundAgent(
        await SessionRecorder.resume({ store, ...JUDGING_RUN, actor }),
        resumed,
        { callback },
      );
      expect(again).toEqual({ text: "done", refunds: [], heard: ["no"], errors: [] });
      expect(providerCalls(resumed)).toBe(0);
      expect(await judged(store)).toEqual(JUDGED);
    });

    it(`takes no other call for ${callback}'s: another agent's, started while it runs, is refused`, async () => {
      const store = await sqliteStore(`other-agent-${callback}.db`);
      const recorder = new SessionRecorder({ store, ...JUDGING_RUN, actor });
      const model = refundModel();
      const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
      // Another agent's call on the same recorder, started (outside the callback) while the
      // stream waits at its tool-call part for the callback.
      let startOther!: () => void;
      const otherStarts = new Promise<void>((resolve) => {
        startOther = resolve;
      });
      const other = (async () => {
        await otherStarts;
        return generateText({ model: wrapped, prompt: "the other agent asks" });
      })();
      const { text, refunds, heard, errors } = await refundAgent(recorder, model, {
        callback,
        ask: async () => {
          startOther();
          await other.catch(() => undefined);
          return "no";
        },
      });
      expect({ text, refunds, heard, errors }).toEqual({
        text: "done",
        refunds: [5],
        heard: ["no"],
        errors: [],
      });
      await expect(other).rejects.toThrow(InvalidArgumentError);
      await expect(other).rejects.toThrow(
        'waited at the tool-call part of tool call c1 (tool "refund")',
      );
      await expect(other).rejects.toThrow("two agents");
      // Nothing of the refused call is recorded, and the provider never heard of it.
      expect(providerCalls(model)).toBe(2);
      expect(await judged(store)).toEqual([
        "run.started",
        "model.requested (agent)",
        "model.completed",
        "tool.requested",
        "tool.completed",
        "model.requested (agent)",
        "model.completed",
      ]);
    });
  }

  it("after a SIGKILL with the agent's stream open, the resume answers the judge in its place", async () => {
    // The child's judge (needsApproval) is answered and recorded; it dies when the agent's
    // stream is read on after its tool-call part.
    const path = join(scratch, "judged-cut-stream.db");
    const crashed = await crashInChild("approval judged, its stream still open", path);
    expect(crashed.modelCalls).toBe(2);
    const store = await sqliteStore("judged-cut-stream.db");
    expect(await judged(store)).toEqual(JUDGED.slice(0, 4));

    const resumed = refundModel();
    const again = await refundAgent(
      await SessionRecorder.resume({ store, ...JUDGING_RUN, actor }),
      resumed,
      { callback: "needsApproval" },
    );
    expect(again).toEqual({ text: "done", refunds: [5], heard: ["no"], errors: [] });
    // The stream cut by the crash is made again (live: its tool-call part waits for the judge
    // again); the judge is answered from the ledger.
    expect(resumed.doGenerateCalls).toHaveLength(0);
    expect(resumed.doStreamCalls).toHaveLength(2);
    expect(await judged(store)).toEqual([
      ...JUDGED.slice(0, 4),
      "model.requested (agent) retry",
      ...JUDGED.slice(4),
    ]);
  });

  it("still takes a repair's call (no tool's) by its timing, then the judge's, and replays both", async () => {
    const store = await sqliteStore("repaired-judged.db");
    const live = refundModel({ badInput: true });
    const options = { callback: "needsApproval", repair: true } as const;
    expect(
      await refundAgent(new SessionRecorder({ store, ...JUDGING_RUN, actor }), live, options),
    ).toEqual({ text: "done", refunds: [5], heard: ["no"], errors: [] });
    expect(providerCalls(live)).toBe(4);
    const recorded = [
      "run.started",
      "model.requested (agent)",
      "model.requested (repair)",
      "model.completed",
      "model.requested (risky?)",
      "model.completed",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested (agent)",
      "model.completed",
    ];
    expect(await judged(store)).toEqual(recorded);

    const resumed = refundModel({ badInput: true });
    const again = await refundAgent(
      await SessionRecorder.resume({ store, ...JUDGING_RUN, actor }),
      resumed,
      options,
    );
    expect(again).toEqual({ text: "done", refunds: [], heard: ["no"], errors: [] });
    expect(providerCalls(resumed)).toBe(0);
    expect(await judged(store)).toEqual(recorded);
  });

  it("still takes the call of a tool not given through wrapTools by its timing", async () => {
    const store = await sqliteStore("unwrapped-judged.db");
    const live = refundModel();
    const { text, heard, errors } = await refundAgent(
      new SessionRecorder({ store, ...JUDGING_RUN, actor }),
      live,
      { callback: "needsApproval", wrap: false },
    );
    expect({ text, heard, errors }).toEqual({ text: "done", heard: ["no"], errors: [] });
    expect((await judged(store)).slice(0, 5)).toEqual(JUDGED.slice(0, 5));
  });
});
