import { join } from "node:path";
import {
  type EventStore,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, describe, expect, it, onTestFinished } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
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

const scratch = scratchDirectory("ai-sdk-callbacks-", afterAll);

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
async function timeline(store: EventStore) {
  const events = await readWholeRun(store, address);
  return events.map((event) => {
    if (event.type !== "model.requested") return event.type;
    const prompt = JSON.stringify(payload(event).request.prompt);
    const asked = /repair|risky\?/.exec(prompt)?.[0] ?? "agent";
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
