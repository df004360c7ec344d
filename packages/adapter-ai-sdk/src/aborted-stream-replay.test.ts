import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  streamPartsOf,
  textResult,
} from "./testing/scripted-model.test.data.js";

const address = { sessionId: "aborted", runId: "r1" };

/** A provider stream that takes a moment per part, so that the user can press stop. */
function slowModel() {
  return new MockLanguageModelV3({
    doStream: async () => {
      const parts = streamPartsOf(textResult("one two three four five six"));
      let index = 0;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          async pull(controller) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            const part = parts[index++];
            if (part === undefined) controller.close();
            else controller.enqueue(part);
          },
        }),
      };
    },
  });
}

/**
 * A chat turn whose user presses stop after `stopAfter` words (never, if undefined): what its
 * fullStream gave (or threw), the text it streamed, and whether the SDK called onAbort.
 */
async function turn(recorder: SessionRecorder, model: MockLanguageModelV3, stopAfter?: number) {
  const controller = new AbortController();
  let aborted = 0;
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "count",
    abortSignal: controller.signal,
    onAbort: () => {
      aborted++;
    },
  });
  const parts: string[] = [];
  let text = "";
  let words = 0;
  try {
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === "text-delta") text += part.text;
      if (part.type === "text-delta" && ++words === stopAfter) controller.abort();
    }
  } catch (error) {
    parts.push(`threw ${(error as Error).name}`);
  }
  return { parts, text, aborted };
}

describe("a stream its user aborted, on resume", () => {
  it("is asked again (a retry of it), where the replay threw the abort and the resumed turn died there", async () => {
    const store = new MemoryEventStore();
    const live = await turn(new SessionRecorder({ store, ...address, actor }), slowModel(), 2);
    expect(live.parts.at(-1)).toBe("abort");
    expect(live.aborted).toBe(1);
    const [failed] = (await store.readRun(address)).events.filter(
      (event) => event.type === "model.failed",
    );
    expect(failed?.payload).toMatchObject({ error: { name: "AbortError" } });
    expect(failed?.metadata).toMatchObject({ aiSdk: { abortedByCaller: true } });

    const model = slowModel();
    const resumed = await turn(await SessionRecorder.resume({ store, ...address, actor }), model);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(resumed.parts).not.toContain("abort");
    expect(resumed.parts.filter((part) => part === "text-delta")).toHaveLength(6);
    expect(resumed.parts.at(-1)).toBe("finish");
    expect(resumed.text).toBe("one two three four five six");
    const events = (await store.readRun(address)).events;
    const retry = events.find(
      (event) => event.type === "model.requested" && event.seq > failed!.seq,
    );
    expect(retry?.retryOf).toBe(failed?.attemptId);
    expect(events.at(-1)?.type).toBe("model.completed");

    // Resumed once more, the call is answered from the ledger: its retry's answer.
    const again = slowModel();
    const replayed = await turn(await SessionRecorder.resume({ store, ...address, actor }), again);
    expect(again.doStreamCalls).toHaveLength(0);
    // Re-emitted from the recorded content: its text in one delta.
    expect(replayed.text).toBe("one two three four five six");
    expect(replayed.parts.at(-1)).toBe("finish");
  });

  it("a generateText call its user aborted is asked again on resume too", async () => {
    const store = new MemoryEventStore();
    const address = { sessionId: "aborted-generate", runId: "r1" };
    const generate = (
      recorder: SessionRecorder,
      model: MockLanguageModelV3,
      signal?: AbortSignal,
    ) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "count",
        abortSignal: signal,
        maxRetries: 0,
      });
    const controller = new AbortController();
    const hanging = new MockLanguageModelV3({
      doGenerate: ({ abortSignal }) =>
        new Promise((_, reject) => {
          abortSignal?.addEventListener("abort", () => reject(abortSignal.reason), { once: true });
          setTimeout(() => controller.abort(), 5);
        }),
    });
    const live = new SessionRecorder({ store, ...address, actor });
    await expect(generate(live, hanging, controller.signal)).rejects.toMatchObject({
      name: "AbortError",
    });
    const answering = new MockLanguageModelV3({ doGenerate: async () => textResult("six") });
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    expect((await generate(resumed, answering)).text).toBe("six");
    expect(answering.doGenerateCalls).toHaveLength(1);
  });
});
