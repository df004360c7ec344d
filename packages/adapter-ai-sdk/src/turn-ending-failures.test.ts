import { type LedgerEvent, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { APICallError, type LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  assistant as actor,
  partsStream,
  streamPartsOf,
  textResult,
} from "./testing/scripted-model.test.data.js";

// A model call that failed for good ended the turn; the turn sent again (the chat client's
// resend, once the provider is back) must ask the model again, not replay that end for ever.

const address = { sessionId: "chat-1", runId: "turn-m1" };

/** The provider's 503; `retry-after-ms` keeps the SDK's back-off short. */
const unavailable = () =>
  new APICallError({
    message: "Service Unavailable",
    url: "https://example.invalid",
    requestBodyValues: {},
    statusCode: 503,
    responseHeaders: { "retry-after-ms": "1" },
    isRetryable: true,
  });

/**
 * A provider down (`how`: its call throws, or its stream ends with an `error` part) until
 * `up()`, then answering "Order 42 shipped.".
 */
function flakyProvider(how: "throw" | "error-part") {
  let down = true;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      if (down) throw unavailable();
      return textResult("Order 42 shipped.");
    },
    doStream: async () => {
      if (down && how === "throw") throw unavailable();
      const parts: LanguageModelV3StreamPart[] = down
        ? [
            { type: "stream-start", warnings: [] },
            { type: "error", error: { message: "overloaded_error" } },
          ]
        : streamPartsOf(textResult("Order 42 shipped."));
      return { stream: partsStream(parts) };
    },
  });
  return {
    model,
    up: () => {
      down = false;
    },
    get calls() {
      return model.doGenerateCalls.length + model.doStreamCalls.length;
    },
  };
}

/** The recorder the README's chat route makes: resumed if a process had begun the turn. */
async function turnRecorder(store: MemoryEventStore): Promise<SessionRecorder> {
  const begun = (await store.listRuns(address.sessionId)).some(
    (run) => run.runId === address.runId,
  );
  const where = { store, ...address, actor };
  return begun ? SessionRecorder.resume(where) : new SessionRecorder(where);
}

/** One request of the README's chat route (its onFinish guard included): the text it streamed. */
async function chatTurn(store: MemoryEventStore, model: MockLanguageModelV3) {
  const recorder = await turnRecorder(store);
  const errors: unknown[] = [];
  let finished: () => void = () => undefined;
  const onFinishRan = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "Where is order 42?",
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    onError: ({ error }) => {
      errors.push(error);
    },
    onFinish: async ({ text, finishReason }) => {
      // A turn that ended in the provider's error stays open: sent again, it is asked again.
      if (recorder.status === "running" && finishReason !== "error")
        await recorder.completeRun({ text });
      finished();
    },
  });
  let text = "";
  for await (const part of result.fullStream) if (part.type === "text-delta") text += part.text;
  // The SDK does not call onFinish for a turn whose call threw.
  if (errors.length === 0) await onFinishRan;
  return { text, errors, status: recorder.status };
}

const ofType = (events: readonly LedgerEvent[], type: string) =>
  events.filter((event) => event.type === type);

describe("a model call whose failure ended the turn, sent again", () => {
  it("is asked again as a retry of it once the provider is back (the provider threw)", async () => {
    const store = new MemoryEventStore();
    const provider = flakyProvider("throw");
    const first = await chatTurn(store, provider.model);
    expect(first.errors).toHaveLength(1);
    expect(first.status).toBe("running");

    provider.up();
    const resent = await chatTurn(store, provider.model);
    expect(resent.errors).toEqual([]);
    expect(resent.text).toBe("Order 42 shipped.");
    expect(resent.status).toBe("completed");
    expect(provider.calls).toBe(2);
    const events = (await store.readRun(address)).events;
    const [failed] = ofType(events, "model.failed");
    const requests = ofType(events, "model.requested");
    expect(requests).toHaveLength(2);
    expect(requests[1]?.retryOf).toBe(failed?.attemptId);
    expect(requests[1]?.stepId).toBe(failed?.stepId);
    expect(requests[1]?.metadata).toMatchObject({ aiSdk: { askedAgainAfterFailure: true } });

    // Sent once more, the answered turn is answered from the ledger.
    const again = await chatTurn(store, provider.model);
    expect(again.text).toBe("Order 42 shipped.");
    expect(provider.calls).toBe(2);
  });

  it("is asked again after a stream that ended in an error part, its run left open by onFinish", async () => {
    const store = new MemoryEventStore();
    const provider = flakyProvider("error-part");
    const first = await chatTurn(store, provider.model);
    expect(first.text).toBe("");
    expect(first.errors).toMatchObject([{ message: "overloaded_error" }]);
    expect(first.status).toBe("running");

    provider.up();
    const resent = await chatTurn(store, provider.model);
    expect(resent.errors).toEqual([]);
    expect(resent.text).toBe("Order 42 shipped.");
    expect(resent.status).toBe("completed");
    expect(provider.calls).toBe(2);
  });

  it("replays the failures the SDK retried past, and asks again only the last", async () => {
    const store = new MemoryEventStore();
    const provider = flakyProvider("throw");
    const generate = async () =>
      generateText({
        model: wrapLanguageModel({
          model: provider.model,
          middleware: ledgerMiddleware({ recorder: await turnRecorder(store) }),
        }),
        prompt: "Where is order 42?",
        maxRetries: 2,
      });
    await expect(generate()).rejects.toMatchObject({ name: "AI_RetryError" });
    expect(provider.calls).toBe(3);

    provider.up();
    expect((await generate()).text).toBe("Order 42 shipped.");
    // The two failures the SDK retried past are answered from the ledger: one provider call.
    expect(provider.calls).toBe(4);
    const events = (await store.readRun(address)).events;
    const failed = ofType(events, "model.failed");
    const requests = ofType(events, "model.requested");
    expect(failed).toHaveLength(3);
    expect(requests).toHaveLength(4);
    expect(requests[3]?.retryOf).toBe(failed[2]?.attemptId);
  });

  it("stays replayed on a run its caller closed as failed", async () => {
    const store = new MemoryEventStore();
    const provider = flakyProvider("throw");
    const generate = (recorder: SessionRecorder) =>
      generateText({
        model: wrapLanguageModel({
          model: provider.model,
          middleware: ledgerMiddleware({ recorder }),
        }),
        prompt: "Where is order 42?",
        maxRetries: 0,
      });
    const live = await turnRecorder(store);
    const error = await generate(live).catch((caught: unknown) => caught);
    await live.failRun(error);

    provider.up();
    await expect(generate(await turnRecorder(store))).rejects.toMatchObject({
      message: "Service Unavailable",
    });
    expect(provider.calls).toBe(1);
  });
});
