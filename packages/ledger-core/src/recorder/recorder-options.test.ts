import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "planner" };
const request = { model: "m", apiKey: "sk-live-1234", messages: [{ role: "user", content: "hi" }] };

/** Makes a recorder on `store` with `options` over valid ones; expects invalid-argument at `path`. */
function expectRefused(
  store: MemoryEventStore,
  label: string,
  options: object,
  path: string,
): void {
  let error: unknown;
  try {
    new SessionRecorder({ store, sessionId: "s", actor, ...options } as never);
  } catch (caught) {
    error = caught;
  }
  expect(LedgerError.isInstance(error, "invalid-argument"), `${label}: ${String(error)}`).toBe(
    true,
  );
  expect((error as LedgerError).path, label).toBe(path);
}

describe("the redact option", () => {
  it("a redaction that would match nothing or throw later is refused when the recorder is made", async () => {
    const store = new MemoryEventStore();
    for (const [label, redact, path] of [
      ["a single string", "request.apiKey", "$.redact"],
      ["a number", 5, "$.redact"],
      ["an object", { paths: ["request.apiKey"] }, "$.redact"],
      ["a non-string path", ["request.apiKey", 5], "$.redact[1]"],
      ["an empty path", [""], "$.redact[0]"],
      ["an empty segment", ["request..apiKey"], "$.redact[0]"],
      ["a trailing dot", ["request.apiKey."], "$.redact[0]"],
    ] as const)
      expectRefused(store, label, { redact }, path);
    expect((await store.listSessions()).sessions).toEqual([]);
  });

  it("a paths array is copied: changing it afterwards does not change what is removed", async () => {
    const store = new MemoryEventStore();
    const redact = ["request.apiKey"];
    const recorder = new SessionRecorder({ store, sessionId: "s", actor, redact });
    redact.length = 0;
    const attempt = await recorder.beforeModelCall({ request });
    expect(attempt.request).toMatchObject({ apiKey: "[redacted]" });
  });

  it("paths are into each event's payload: run output, reasons of abandon, approve and cancel", async () => {
    const store = new MemoryEventStore();
    const redact = ["output.token", "reason"];
    const secret = "token hunter2";
    const recorder = new SessionRecorder({ store, sessionId: "s", actor, redact });
    await recorder.startRun();
    const [approved, abandoned] = await Promise.all(
      ["c1", "c2"].map((toolCallId) =>
        recorder.beforeToolCall({ toolCallId, name: "t", args: {} }),
      ),
    );
    await recorder.approve(approved as Attempt, secret);
    await recorder.abandon(abandoned as Attempt, secret);
    await recorder.completeRun({ token: secret, answer: 42 });
    const cancelled = new SessionRecorder({ store, sessionId: "s", actor, redact });
    await cancelled.startRun();
    await cancelled.cancelRun(secret);
    const events = (await store.readSession({ sessionId: "s" })).events;
    expect(JSON.stringify(events.map((event) => event.payload))).not.toContain("hunter2");
    expect(events.map((event) => [event.type, event.payload]).slice(3)).toEqual([
      ["attempt.approved", { reason: "[redacted]", toolCallId: "c1" }],
      ["attempt.abandoned", { reason: "[redacted]", toolCallId: "c2" }],
      ["run.completed", { output: { token: "[redacted]", answer: 42 } }],
      ["run.started", {}],
      ["run.cancelled", { reason: "[redacted]" }],
    ]);
  });
});

describe("the store and compact options", () => {
  it("a missing store or a malformed compact threshold is refused when the recorder is made", async () => {
    const store = new MemoryEventStore();
    for (const [label, options, path] of [
      ["no store", { store: undefined }, "$.store"],
      ["a URL instead of a store", { store: "sqlite:./ledger.db" }, "$.store"],
      ["compact as a number", { compact: 4096 }, "$.compact"],
      ["a threshold as text", { compact: { thresholdBytes: "4k" } }, "$.compact.thresholdBytes"],
      ["a negative threshold", { compact: { thresholdBytes: -1 } }, "$.compact.thresholdBytes"],
      [
        "a NaN text threshold",
        { compact: { textThresholdBytes: Number.NaN } },
        "$.compact.textThresholdBytes",
      ],
    ] as const)
      expectRefused(store, label, options, path);
    expect((await store.listSessions()).sessions).toEqual([]);
  });

  it("a valid threshold is used: a model name stays inline, a long text goes to a blob", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor,
      compact: { thresholdBytes: 64, textThresholdBytes: 32 },
    });
    const attempt = await recorder.beforeModelCall({
      request: { model: "m", messages: [{ role: "user", content: "x".repeat(100) }] },
    });
    const [event] = (await store.readRun({ sessionId: "s", runId: recorder.runId })).events;
    if (event === undefined) throw new Error("the request was not recorded");
    expect((event.payload as { request: { model: unknown } }).request.model).toBe("m");
    expect(event.evidenceRefs?.length).toBeGreaterThan(0);
    expect(attempt.request).toMatchObject({ model: "m" });
  });

  it("options that are not an object are invalid-argument at $, for new and resume", async () => {
    for (const options of [undefined, null, "session-1", []]) {
      let error: unknown;
      try {
        new SessionRecorder(options as never);
      } catch (caught) {
        error = caught;
      }
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe("$");
      const resumed = await SessionRecorder.resume(options as never).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(resumed, "invalid-argument"), String(resumed)).toBe(true);
      expect((resumed as LedgerError).path).toBe("$");
    }
  });
});

describe("an option the recorder does not take", () => {
  const secretRequest = { request: { model: "m", apiKey: "sk-live-1234" } };

  it("is refused at its path by new, resume and child, naming the options there are", async () => {
    const store = new MemoryEventStore();
    // `redcat` for `redact`: taken without a word, the key would reach the ledger.
    expectRefused(store, "redcat", { redcat: ["request.apiKey"] }, "$.redcat");
    expectRefused(store, "metaData", { metaData: { host: "a" } }, "$.metaData");
    let error: unknown;
    try {
      new SessionRecorder({ store, sessionId: "s", actor, compcat: false } as never);
    } catch (caught) {
      error = caught;
    }
    expect((error as LedgerError).message).toContain(
      "runId, actor, parentRunId, causedByEventId, redact, metadata, compact",
    );

    const parent = new SessionRecorder({ store, sessionId: "s", runId: "p", actor });
    await parent.startRun();
    let childError: unknown;
    try {
      parent.child({ actor, redcat: ["request.apiKey"] } as never);
    } catch (caught) {
      childError = caught;
    }
    expect(LedgerError.isInstance(childError, "invalid-argument"), String(childError)).toBe(true);
    expect((childError as LedgerError).path).toBe("$.redcat");
    expect((childError as LedgerError).message).toContain("actor, runId, causedByEventId, redact");

    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "p",
      actor,
      resolv: false,
    } as never).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(resumed, "invalid-argument"), String(resumed)).toBe(true);
    expect((resumed as LedgerError).path).toBe("$.resolv");
    expect((resumed as LedgerError).message).toContain("resolve");

    // Nothing but the parent's start was written, and the secret nowhere.
    const events = (await store.readSession({ sessionId: "s" })).events;
    expect(events.map((event) => event.type)).toEqual(["run.started"]);
    expect(JSON.stringify(events)).not.toContain(secretRequest.request.apiKey);
  });

  it("the options that are there are all taken, by new, resume and child", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "r",
      actor,
      parentRunId: "p",
      causedByEventId: "e",
      redact: ["request.apiKey"],
      metadata: { host: "a" },
      compact: false,
    });
    await recorder.startRun();
    const child = recorder.child({ actor, runId: "c", causedByEventId: "e", redact: [] });
    await child.startRun();
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor,
      redact: ["request.apiKey"],
      metadata: { host: "a" },
      compact: false,
      resolve: false,
    });
    await resumed.beforeModelCall(secretRequest);
    const events = (await store.readSession({ sessionId: "s" })).events;
    expect(JSON.stringify(events)).not.toContain(secretRequest.request.apiKey);
  });
});
