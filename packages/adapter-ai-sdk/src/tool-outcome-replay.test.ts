import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import {
  assistant as actor,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "tool-outcomes", runId: "r1" };

/** Asks for one `check` call, then answers "done"; `outputs` collects what the model was given. */
function checkingModel(outputs: unknown[]) {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }: LanguageModelV3CallOptions) => {
      const last = prompt.at(-1);
      if (last?.role !== "tool") return toolCallsResult(toolCall("c1", "check", {}));
      outputs.push(last.content[0]?.type === "tool-result" ? last.content[0].output : undefined);
      return textResult("done");
    },
  });
}

/** The run with a `check` tool that does `execute`, live and then resumed. */
async function liveThenResumed(execute: () => Promise<unknown>) {
  const store = new MemoryEventStore();
  const run = async (recorder: SessionRecorder, outputs: unknown[]) => {
    let runs = 0;
    const { text } = await generateText({
      model: wrapLanguageModel({
        model: checkingModel(outputs),
        middleware: ledgerMiddleware({ recorder }),
      }),
      tools: wrapTools(
        {
          check: tool({
            inputSchema: z.object({}),
            execute: () => {
              runs++;
              return execute();
            },
          }),
        },
        { recorder },
      ),
      prompt: "check",
      stopWhen: stepCountIs(3),
    });
    return { text, runs };
  };
  const live: unknown[] = [];
  expect(await run(new SessionRecorder({ store, ...address, actor }), live)).toEqual({
    text: "done",
    runs: 1,
  });
  // Answered from the ledger: no model call, no tool run, and no replay-divergence.
  const replayed: unknown[] = [];
  const again = await run(await SessionRecorder.resume({ store, ...address, actor }), replayed);
  expect(again).toEqual({ text: "done", runs: 0 });
  return live[0];
}

describe("a tool outcome the SDK turns into the model's next input, resumed", () => {
  it("replays a Date returned at top level as a Date (a JSON output, not a text one)", async () => {
    expect(await liveThenResumed(async () => new Date(0))).toEqual({
      type: "json",
      value: new Date(0),
    });
  });

  it("replays a thrown null or undefined as thrown (the SDK's 'unknown error')", async () => {
    expect(await liveThenResumed(async () => Promise.reject(null))).toEqual({
      type: "error-text",
      value: "unknown error",
    });
    expect(await liveThenResumed(async () => Promise.reject(undefined))).toEqual({
      type: "error-text",
      value: "unknown error",
    });
  });

  it("replays a thrown string as that string", async () => {
    expect(await liveThenResumed(async () => Promise.reject("quota exceeded"))).toEqual({
      type: "error-text",
      value: "quota exceeded",
    });
  });

  it("replays a thrown error-like object as that object, its JSON for the model", async () => {
    const failure = { name: "QuotaError", message: "over quota", limit: 5 };
    expect(await liveThenResumed(async () => Promise.reject(failure))).toEqual({
      type: "error-text",
      value: JSON.stringify(failure),
    });
  });
});

describe("a tool outcome of the last step, restored as the model would have seen it", () => {
  /** One step: the model asks for `check`, which does `execute`; the run stops there. */
  async function restoredResult(execute: () => Promise<unknown>) {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await generateText({
      model: wrapLanguageModel({
        model: checkingModel([]),
        middleware: ledgerMiddleware({ recorder }),
      }),
      tools: wrapTools({ check: tool({ inputSchema: z.object({}), execute }) }, { recorder }),
      prompt: "check",
      stopWhen: stepCountIs(1),
    });
    const messages = await restoreMessages(store, address);
    const last = messages.at(-1);
    return last?.role === "tool" ? last.content[0] : undefined;
  }

  it("gives a Date returned as a JSON output, and a thrown null as 'unknown error'", async () => {
    expect(await restoredResult(async () => new Date(0))).toMatchObject({
      output: { type: "json", value: "1970-01-01T00:00:00.000Z" },
    });
    expect(await restoredResult(async () => Promise.reject(null))).toMatchObject({
      output: { type: "error-text", value: "unknown error" },
    });
  });
});
