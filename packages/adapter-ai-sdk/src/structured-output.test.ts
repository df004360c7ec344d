import { MemoryEventStore, SessionRecorder, verifyRun } from "@agent-ledger/core";
import {
  generateObject,
  generateText,
  Output,
  stepCountIs,
  streamObject,
  tool,
  wrapLanguageModel,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "s1", runId: "r1" };
const city = z.object({ city: z.string(), population: z.number() });

/** Runs `run` live on a fresh ledger, then again on a resumed recorder; both results. */
async function liveThenResumed<T>(
  run: (recorder: SessionRecorder) => Promise<{ value: T; calls: () => number }>,
) {
  const store = new MemoryEventStore();
  const live = await run(new SessionRecorder({ store, actor, ...address }));
  const replay = await run(await SessionRecorder.resume({ store, actor, ...address }));
  return { store, live, replay };
}

describe("structured output, live and resumed", () => {
  it("generateObject whose answer only parses after experimental_repairText", async () => {
    const repairs: string[] = [];
    const { live, replay } = await liveThenResumed(async (recorder) => {
      const model = scriptedModel([textResult('{"city":"Paris","population":2100000')]);
      const { object } = await generateObject({
        model: wrapLanguageModel({
          model: model.model,
          middleware: ledgerMiddleware({ recorder }),
        }),
        schema: city,
        prompt: "biggest French city",
        experimental_repairText: async ({ text }) => {
          repairs.push(text);
          return `${text}}`;
        },
      });
      return { value: object, calls: () => model.calls };
    });
    expect(live.value).toEqual({ city: "Paris", population: 2_100_000 });
    expect(replay.value).toEqual(live.value);
    expect(replay.calls()).toBe(0);
    // The repair runs again on replay: it is the app's code, given the recorded text.
    expect(repairs).toEqual([
      '{"city":"Paris","population":2100000',
      '{"city":"Paris","population":2100000',
    ]);
  });

  it("streamObject: a replay's partialObjectStream gives the recorded object whole", async () => {
    const { store, live, replay } = await liveThenResumed(async (recorder) => {
      const model = scriptedModel([textResult('{"city": "Paris", "population": 2100000}')]);
      const result = streamObject({
        model: wrapLanguageModel({
          model: model.model,
          middleware: ledgerMiddleware({ recorder }),
        }),
        schema: city,
        prompt: "biggest French city",
      });
      const partials: unknown[] = [];
      for await (const partial of result.partialObjectStream) partials.push(partial);
      await recorder.completeRun({ object: await result.object });
      return { value: { partials, object: await result.object }, calls: () => model.calls };
    });
    expect(live.value.object).toEqual({ city: "Paris", population: 2_100_000 });
    expect(live.value.partials.length).toBeGreaterThan(1);
    // A replayed stream gives each text block as one delta: the object comes whole, once.
    expect(replay.value).toEqual({ partials: [live.value.object], object: live.value.object });
    expect(replay.calls()).toBe(0);
    expect((await verifyRun(store, address)).ok).toBe(true);
  });

  it("generateText with Output.object after a tool step", async () => {
    const lookups: string[] = [];
    const { live, replay } = await liveThenResumed(async (recorder) => {
      const model = scriptedModel([
        toolCallsResult(toolCall("c1", "census", { city: "Paris" })),
        textResult('{"city":"Paris","population":2100000}'),
      ]);
      const { output } = await generateText({
        model: wrapLanguageModel({
          model: model.model,
          middleware: ledgerMiddleware({ recorder }),
        }),
        tools: wrapTools(
          {
            census: tool({
              inputSchema: z.object({ city: z.string() }),
              execute: async ({ city: name }) => {
                lookups.push(name);
                return { population: 2_100_000 };
              },
            }),
          },
          { recorder },
        ),
        output: Output.object({ schema: city }),
        prompt: "biggest French city",
        stopWhen: stepCountIs(3),
      });
      return { value: output, calls: () => model.calls };
    });
    expect(live.value).toEqual({ city: "Paris", population: 2_100_000 });
    expect(replay.value).toEqual(live.value);
    expect(replay.calls()).toBe(0);
    expect(lookups).toEqual(["Paris"]);
  });
});
