import { join } from "node:path";
import {
  type JsonObject,
  MemoryEventStore,
  normalizeError,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { rejection, scratchDirectory, seenByCaller } from "@agent-ledger/core/testing";
import { GatewayError, GatewayRateLimitError } from "@ai-sdk/gateway";
import { APICallError } from "@ai-sdk/provider";
import { generateText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { AttemptAbandonedError, failureMetadataOf, rebuildError } from "./replayed-errors.js";
import { address, eventsOf } from "./testing/replay-agent.test.data.js";
import { assistant as actor, payload, textResult } from "./testing/scripted-model.test.data.js";

/** A model whose first call fails with `error`, then answers "ok"; `calls` counts every call. */
function failsOnceWith(error: Error) {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async () => {
      if (calls++ === 0) throw error;
      return textResult("ok");
    },
  });
  return {
    model,
    get calls() {
      return calls;
    },
  };
}

const scratch = scratchDirectory("ai-sdk-replayed-errors-", { beforeAll, afterAll });

describe("a recorded failure thrown again on replay", () => {
  it("an error of the provider's own client is thrown again with its name, message, code, status and cause", async () => {
    // A provider that throws its client's errors as they are (no APICallError): a 429 with a
    // code, caused by the socket's error.
    const socket = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const rateLimited = () =>
      failsOnceWith(
        Object.assign(new Error("Rate limit reached", { cause: socket }), {
          name: "RateLimitError",
          status: 429,
          code: "rate_limit_exceeded",
        }),
      );
    const path = join(scratch, "rate-limited.db");
    const generate = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "hi",
      });
    const first = new SqliteEventStore({ path });
    await first.init();
    const live = rateLimited();
    const liveRecorder = new SessionRecorder({ store: first, actor, ...address });
    const liveError = await rejection(generate(liveRecorder, live.model));
    expect(seenByCaller(liveError)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    // The application closed the run the failure ended: replayed, not asked again.
    await liveRecorder.failRun(liveError);
    await first.close();

    // The next process, on the same file.
    const second = new SqliteEventStore({ path });
    await second.init();
    onTestFinished(() => second.close());
    const resumed = rateLimited();
    const replayed = await rejection(
      generate(await SessionRecorder.resume({ store: second, actor, ...address }), resumed.model),
    );
    expect(seenByCaller(replayed)).toEqual(seenByCaller(liveError));
    expect(resumed.calls).toBe(0);
  });

  it("a retryable AI Gateway error is retried on replay as it was live: the ledger answers both attempts", async () => {
    const store = new MemoryEventStore();
    const generate = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "hi",
        maxRetries: 2,
      });
    const rateLimited = () =>
      failsOnceWith(new GatewayRateLimitError({ message: "Rate limit exceeded", statusCode: 429 }));
    const live = rateLimited();
    const original = await generate(new SessionRecorder({ store, actor, ...address }), live.model);
    expect(original.text).toBe("ok");
    expect(live.calls).toBe(2);
    const recorded = await eventsOf(store);
    const models = recorded.filter((event) => event.type.startsWith("model."));
    expect(models.map((event) => event.type)).toEqual([
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);
    expect(models[2]?.retryOf).toBe(models[0]?.attemptId);
    expect(payload(models[1]).error.name).toBe("GatewayRateLimitError");

    const resumed = rateLimited();
    const replayed = await generate(
      await SessionRecorder.resume({ store, actor, ...address }),
      resumed.model,
    );
    expect(replayed.text).toBe("ok");
    expect(resumed.calls).toBe(0);
    expect(await eventsOf(store)).toEqual(recorded);
  });

  it("an abandoned call's error has a stable code, and is recognised across copies of the package", () => {
    const error = new AttemptAbandonedError("tool call refund", "refunded by phone");
    expect([error.name, error.code, error.reason, error.message]).toEqual([
      "AttemptAbandonedError",
      "attempt-abandoned",
      "refunded by phone",
      "tool call refund was abandoned: refunded by phone",
    ]);
    expect(AttemptAbandonedError.isInstance(error)).toBe(true);
    // Another copy's class is another object: its errors carry the same registered symbol.
    const fromAnotherCopy = Object.assign(new Error("x"), {
      [Symbol.for("agent-ledger.attempt-abandoned")]: true,
    });
    expect(AttemptAbandonedError.isInstance(fromAnotherCopy)).toBe(true);
    for (const other of [new Error("tool call refund was abandoned: x"), null, "abandoned"])
      expect(AttemptAbandonedError.isInstance(other)).toBe(false);
  });

  it("keeps the recorded code of an error that is no AI SDK error (a driver's, a ledger's)", () => {
    const live = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const recorded = normalizeError(live);
    const replayed = rebuildError(recorded, failureMetadataOf(live)) as Error & { code?: string };
    expect([replayed.name, replayed.message, replayed.code]).toEqual([
      "Error",
      "socket hang up",
      "ECONNRESET",
    ]);
  });

  it("is rebuilt with what the SDK's retry reads: the error's brand, isRetryable, and the retry headers", () => {
    const throttled = new APICallError({
      message: "Too Many Requests",
      url: "https://gateway.invalid/v1/chat",
      requestBodyValues: { secret: "not recorded" },
      statusCode: 429,
      responseHeaders: { "retry-after-ms": "10", "set-cookie": "not recorded" },
      isRetryable: true,
    });
    const cases = [
      new GatewayRateLimitError({ message: "Rate limit exceeded", cause: throttled }),
      new GatewayRateLimitError({ message: "Rate limit exceeded", statusCode: 400 }),
      throttled,
    ];
    for (const original of cases) {
      const metadata = failureMetadataOf(original) as JsonObject;
      // What the ledger holds is plain JSON.
      const stored = JSON.parse(JSON.stringify(metadata)) as JsonObject;
      expect(stored).toEqual(metadata);
      expect(JSON.stringify(stored)).not.toContain("not recorded");
      const rebuilt = rebuildError(
        { name: original.name, message: original.message },
        stored,
      ) as Error & { isRetryable?: unknown; statusCode?: unknown; cause?: unknown };
      expect(rebuilt).toBeInstanceOf(Error);
      expect(rebuilt.name).toBe(original.name);
      expect(rebuilt.message).toBe(original.message);
      expect(APICallError.isInstance(rebuilt)).toBe(APICallError.isInstance(original));
      expect(GatewayError.isInstance(rebuilt)).toBe(GatewayError.isInstance(original));
      expect(GatewayRateLimitError.isInstance(rebuilt)).toBe(
        GatewayRateLimitError.isInstance(original),
      );
      expect(rebuilt.isRetryable).toBe((original as { isRetryable: boolean }).isRetryable);
      expect(rebuilt.statusCode).toBe((original as { statusCode?: number }).statusCode);
      // The SDK's backoff reads retry-after(-ms) on an APICallError, or on its cause.
      const headersOf = (error: unknown) =>
        APICallError.isInstance(error)
          ? error.responseHeaders
          : APICallError.isInstance((error as Error).cause)
            ? ((error as Error).cause as APICallError).responseHeaders
            : undefined;
      expect(headersOf(rebuilt)?.["retry-after-ms"]).toBe(headersOf(original)?.["retry-after-ms"]);
    }
  });
});
