import {
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { OUTCOME_LOST_WARNING } from "./adapter-state.js";
import { innerCallsSettled } from "./inner-calls-settled.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  payload,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const address = { sessionId: "drained", runId: "r1" };

/** A provider stream of `parts` that takes a few milliseconds per part, as a model does. */
function slowStream(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  let index = 0;
  return new ReadableStream(
    {
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const part = parts[index++];
        if (part === undefined) controller.close();
        else controller.enqueue(part);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Streams a long answer slowly, answers a generate call with "second". */
function slowModel() {
  return new MockLanguageModelV3({
    doStream: async () => ({
      stream: slowStream(streamPartsOf(textResult("one two three four five six seven eight"))),
    }),
    doGenerate: async () => textResult("second"),
  });
}

/** A streamText on `recorder` whose consumer breaks out of fullStream at the first text. */
async function breakAtFirstText(recorder: SessionRecorder, model: MockLanguageModelV3) {
  const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
  const result = streamText({ model: wrapped, prompt: "long answer" });
  for await (const part of result.fullStream) if (part.type === "text-delta") break;
  return wrapped;
}

describe("a stream whose consumer broke out of fullStream", () => {
  it("is recorded as the SDK drains it, and the next call waits for that", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const wrapped = await breakAtFirstText(recorder, slowModel());

    const { text } = await generateText({ model: wrapped, prompt: "next" });
    expect(text).toBe("second");
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "model.requested",
      "model.completed",
    ]);
    // The drained stream's whole answer, though its consumer read one word of it.
    expect(payload(events[2]).response.content).toEqual([
      { type: "text", text: "one two three four five six seven eight" },
    ]);
  });

  it("stops a waiting call whose abortSignal aborts, before anything of it is recorded", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = slowModel();
    const wrapped = await breakAtFirstText(recorder, model);

    const controller = new AbortController();
    const next = generateText({ model: wrapped, prompt: "next", abortSignal: controller.signal });
    setTimeout(() => controller.abort(new Error("user left")), 10);
    await expect(next).rejects.toThrow("user left");
    await innerCallsSettled({ recorder, timeoutMs: 5_000 });
    expect(model.doGenerateCalls).toHaveLength(0);
    const events = await readWholeRun(store, address);
    expect(events.filter((event) => event.type === "model.requested")).toHaveLength(1);
  });

  it("has its outcome recorded before the run closes, once innerCallsSettled resolves", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await breakAtFirstText(recorder, slowModel());

    await innerCallsSettled({ recorder, timeoutMs: 5_000 });
    await recorder.completeRun({ text: "one" });
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs.map((run) => run.status)).toEqual(["completed"]);
  });

  it("has its outcome recorded before completeRun closes the run, without innerCallsSettled", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await breakAtFirstText(recorder, slowModel());

    // The run's close waits for the stream the SDK still reads (core's guardClose).
    await recorder.completeRun({ text: "one" });
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.completed",
    ]);
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
  });

  it("reports an outcome lost to a run closed under it elsewhere, by innerCallsSettled and a warning", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await breakAtFirstText(recorder, slowModel());

    const warned = new Promise<Error>((resolve) => {
      const onWarning = (warning: Error & { code?: string }) => {
        if (warning.code !== OUTCOME_LOST_WARNING) return;
        process.off("warning", onWarning);
        resolve(warning);
      };
      process.on("warning", onWarning);
    });
    // Another recorder of the run (an operator's, another process's) cancels it meanwhile: the
    // run cannot take the stream's completion any more.
    const operator = await SessionRecorder.resume({ store, ...address, actor });
    await operator.cancelRun("stopped by the operator");
    const lost = await innerCallsSettled({ recorder, timeoutMs: 5_000 }).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(lost, "run-closed")).toBe(true);
    // Also when nobody calls innerCallsSettled: a process warning names the call.
    expect((await warned).message).toContain("innerCallsSettled");
    expect((await inspectSession(store, address.sessionId)).unresolved).toHaveLength(1);
  });
});

describe("two agents on one recorder, the second started while the first one streams", () => {
  it("lets the second wait for that stream once, and refuses the calls that then overlap", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = new MockLanguageModelV3({
      doStream: async ({ prompt }) => {
        const answered = prompt.some((message) => message.role === "tool");
        const result = answered
          ? textResult("greeted, and a few more words to stream")
          : toolCallsResult(toolCall("call_1", "greet", { who: "you" }));
        return { stream: slowStream(streamPartsOf(result)) };
      },
    });
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const tools = wrapTools(
      { greet: tool({ inputSchema: z.object({ who: z.string() }), execute: async () => "hi" }) },
      { recorder },
    );
    const errors: unknown[] = [];
    const agent = (prompt: string) =>
      streamText({
        model: wrapped,
        tools,
        prompt,
        stopWhen: stepCountIs(3),
        onError: ({ error }) => {
          errors.push(error);
        },
      });
    const first = agent("alice");
    const reading = first.fullStream[Symbol.asyncIterator]();
    while ((await reading.next()).value?.type !== "start-step");
    // Alice's stream is open and read on: Bob's first call waits for it, then holds the run.
    const second = agent("bob");
    await Promise.all([first.consumeStream(), second.consumeStream()]);
    // Alice's next step came while Bob's stream held the run: refused, as two agents are.
    expect(errors).toHaveLength(1);
    expect(LedgerError.isInstance(errors[0], "invalid-argument")).toBe(true);
    expect((errors[0] as Error).message).toContain("recorder.child(");
    expect(await second.text).toBe("greeted, and a few more words to stream");
    const requests = (await readWholeRun(store, address)).filter(
      (event) => event.type === "model.requested",
    );
    expect(requests).toHaveLength(3);
  });
});
