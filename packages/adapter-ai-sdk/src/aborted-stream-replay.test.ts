import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { streamText, wrapLanguageModel } from "ai";
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
 * fullStream gave (or threw), and whether the SDK called onAbort.
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
  let words = 0;
  try {
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === "text-delta" && ++words === stopAfter) controller.abort();
    }
  } catch (error) {
    parts.push(`threw ${(error as Error).name}`);
  }
  return { parts, aborted };
}

describe("a stream its user aborted, replayed on resume", () => {
  it("ends with the recorded AbortError thrown, where live the SDK gave an abort part", async () => {
    const store = new MemoryEventStore();
    const live = await turn(new SessionRecorder({ store, ...address, actor }), slowModel(), 2);
    expect(live.parts.at(-1)).toBe("abort");
    expect(live.aborted).toBe(1);

    const model = slowModel();
    const replayed = await turn(await SessionRecorder.resume({ store, ...address, actor }), model);
    expect(model.doStreamCalls).toHaveLength(0);
    // The same parts up to the abort; then the SDK, whose own signal did not abort this time,
    // throws the recorded AbortError instead of ending with an abort part (see the README).
    expect(replayed.parts.slice(0, -1)).toEqual(live.parts.slice(0, -1));
    expect(replayed.parts.at(-1)).toBe("threw AbortError");
    expect(replayed.aborted).toBe(0);
  });
});
