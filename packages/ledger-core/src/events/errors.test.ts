import { describe, expect, it } from "vitest";
import type { Attempt } from "../recorder/attempt.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import {
  ConflictError,
  DuplicateEventError,
  InvalidArgumentError,
  InvalidEventError,
  LedgerError,
  NonSerializableError,
  NotFoundError,
  ReplayDivergenceError,
  RunClosedError,
  StoreUnavailableError,
  TamperDetectedError,
  UnresolvedAttemptError,
} from "./errors.js";

const inFlight: Attempt = {
  kind: "tool",
  sessionId: "s",
  runId: "r",
  stepId: "st",
  attemptId: "a",
  requestedEventId: "e",
  seq: 1,
  request: {},
  requestHash: "h",
};

describe("LedgerError", () => {
  it("every subclass carries its stable code and is a LedgerError", () => {
    const address = { sessionId: "s", runId: "r" };
    const cases: Array<[LedgerError, string]> = [
      [new ConflictError({ ...address, expectedSeq: 1, actualSeq: 3 }), "conflict"],
      [new DuplicateEventError({ eventId: "e" }), "duplicate-event"],
      [new RunClosedError({ ...address, status: "completed" }), "run-closed"],
      [new NonSerializableError("$.a", "a Date"), "non-serializable"],
      [new InvalidEventError("$.type", "bad"), "invalid-event"],
      [new NotFoundError("gone"), "not-found"],
      [new StoreUnavailableError("down", new Error("ECONNREFUSED")), "store-unavailable"],
      [new ReplayDivergenceError("differs"), "replay-divergence"],
      [new UnresolvedAttemptError("in flight", { attemptId: "a" }, inFlight), "unresolved-attempt"],
      [new TamperDetectedError({ ...address, badSeq: 2, reason: "hash" }), "tamper-detected"],
      [new InvalidArgumentError("$.url", "bad"), "invalid-argument"],
    ];
    for (const [error, code] of cases) {
      expect(error.code).toBe(code);
      expect(error).toBeInstanceOf(LedgerError);
      expect(error).toBeInstanceOf(Error);
      expect(LedgerError.isInstance(error)).toBe(true);
      expect(LedgerError.isInstance(error, code as LedgerError["code"])).toBe(true);
      expect(LedgerError.isInstance(error, code === "conflict" ? "not-found" : "conflict")).toBe(
        false,
      );
      expect(error.message.length).toBeGreaterThan(0);
    }
  });

  it("keeps facts a caller needs: actualSeq, path, cause, badSeq, attemptId", () => {
    const conflict = new ConflictError({
      sessionId: "s",
      runId: "r",
      expectedSeq: 1,
      actualSeq: 3,
    });
    expect([conflict.actualSeq, conflict.expectedSeq]).toEqual([3, 1]);
    expect(conflict.details).toMatchObject({ actualSeq: 3, runId: "r" });
    expect(new NonSerializableError("$.m[3]", "NaN").path).toBe("$.m[3]");
    const cause = new Error("driver");
    expect(new StoreUnavailableError("down", cause).cause).toBe(cause);
    expect(
      new TamperDetectedError({ sessionId: "s", runId: "r", badSeq: 4, reason: "x" }).badSeq,
    ).toBe(4);
    const unresolved = new UnresolvedAttemptError("x", { attemptId: "a1" }, inFlight);
    expect(unresolved.attemptId).toBe("a1");
    expect(unresolved.attempt).toBe(inFlight);
    expect(new DuplicateEventError({ eventId: "e1", path: "$.events[0].eventId" }).path).toBe(
      "$.events[0].eventId",
    );
  });

  it("isInstance with a code types the error as its class, so the README's handling compiles", async () => {
    // A crash while a non-idempotent tool was in flight, then a resume that reaches it again.
    const store = new MemoryEventStore();
    const address = {
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent" as const, id: "a" },
    };
    const first = new SessionRecorder(address);
    await first.startRun();
    await first.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
    const resumed = await SessionRecorder.resume(address);
    await resumed.startRun();
    const caught = await resumed
      .beforeToolCall({ toolCallId: "c1", name: "pay", args: {} })
      .catch((error: unknown) => error);
    if (!LedgerError.isInstance(caught, "unresolved-attempt")) throw caught;
    // Typed: no cast before `.attempt` (the README's `recorder.retry(error.attempt)`).
    const retried = await resumed.retry(caught.attempt);
    expect(retried.retryOf).toBe(caught.attempt.attemptId);

    const stale = await store
      .append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "x.note", payload: {} }],
      })
      .catch((error: unknown) => error);
    if (!LedgerError.isInstance(stale, "conflict")) throw stale;
    expect(stale.actualSeq).toBe((await store.runHead({ sessionId: "s", runId: "r" })).length);
  });

  it("isInstance recognises a copy from another package instance by its Symbol.for marker", () => {
    const copy = Object.assign(new Error("from a duplicated package"), {
      [Symbol.for("agent-ledger.error")]: true,
      code: "conflict",
    });
    expect(copy).not.toBeInstanceOf(LedgerError);
    expect(LedgerError.isInstance(copy)).toBe(true);
    expect(LedgerError.isInstance(copy, "conflict")).toBe(true);
    expect(LedgerError.isInstance(copy, "run-closed")).toBe(false);
    const plain = { [Symbol.for("agent-ledger.error")]: true, code: "not-found" };
    expect(LedgerError.isInstance(plain, "not-found")).toBe(true);
  });

  it("isInstance rejects everything else", () => {
    for (const value of [
      new Error("x"),
      { code: "conflict" },
      { [Symbol("agent-ledger.error")]: true, code: "conflict" },
      null,
      undefined,
      "conflict",
      42,
    ]) {
      expect(LedgerError.isInstance(value)).toBe(false);
    }
  });
});
