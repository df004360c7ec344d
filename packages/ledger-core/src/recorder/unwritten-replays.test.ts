import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError, StoreUnavailableError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { AppendRequest } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-unwritten-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "refunds" };
const address = { sessionId: "s", runId: "r" };

/**
 * How the next appends of an event of one type fail, three times (every try of the commit queue):
 * `locked`, refused by the store, which says it wrote nothing (a SQLite file locked by another
 * process); `unreachable`, refused before reaching the store, but not saying so (a connection
 * refused); `lost`, written and then the reply lost (a connection reset after the commit).
 */
type Failure = "locked" | "unreachable" | "lost";

/** The real SQLite store behind a connection that fails the way `fail` says. */
class FailingStore extends SqliteEventStore {
  readonly #failures = new Map<string, { failure: Failure; times: number }>();
  fail(type: string, failure: Failure): void {
    this.#failures.set(type, { failure, times: 3 });
  }
  override async append(request: AppendRequest) {
    const failing = request.events
      .map((event) => this.#failures.get(event.type))
      .find((planned) => planned !== undefined && planned.times > 0);
    if (failing === undefined) return super.append(request);
    failing.times--;
    if (failing.failure === "locked")
      throw new StoreUnavailableError("database is locked", undefined, { nothingWritten: true });
    if (failing.failure === "unreachable") throw new StoreUnavailableError("connection refused");
    await super.append(request);
    throw new StoreUnavailableError("connection reset after commit");
  }
}

async function open(file: string): Promise<FailingStore> {
  const store = new FailingStore({ path: join(dir, file) });
  await store.init();
  return store;
}

/** A caller that obeys "if before* rejects with store-unavailable, make the call later". */
async function untilRecorded<T>(call: () => Promise<T>): Promise<T> {
  await expect(call()).rejects.toMatchObject({ code: "store-unavailable" });
  return call();
}

/** What a crashed process left: a run with a model call in flight (no outcome). */
async function modelInFlight(file: string) {
  const store = await open(file);
  const crashed = new SessionRecorder({ store, ...address, actor });
  await crashed.startRun();
  const inFlight = await crashed.beforeModelCall({ request: { prompt: "refund order 7" } });
  return { store, inFlight };
}

describe("a resumed run's call whose request was not written, asked again", () => {
  for (const failure of ["locked", "unreachable"] as const)
    it(`is the retry of the recorded call in flight, as its first try was (${failure})`, async () => {
      const { store, inFlight } = await modelInFlight(`model-${failure}.db`);
      const resumed = await SessionRecorder.resume({ store, ...address, actor });
      store.fail("model.requested", failure);
      const again = await untilRecorded(() =>
        resumed.beforeModelCall({ request: { prompt: "refund order 7" } }),
      );
      expect(again).toMatchObject({ stepId: inFlight.stepId, retryOf: inFlight.attemptId });
      await resumed.modelCompleted(again, "Refunded");
      expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
      const requests = (await readWholeRun(store, address)).filter(
        (event) => event.type === "model.requested",
      );
      expect(requests.map((event) => event.retryOf)).toEqual([undefined, inFlight.attemptId]);
      await store.close();
    });

  it("a tool call a person approved is made again by the caller's retry, not refused", async () => {
    const store = await open("approved.db");
    const crashed = new SessionRecorder({ store, ...address, actor });
    await crashed.startRun();
    const pay = { name: "pay", args: { order: 7, cents: 500 } };
    const inFlight = await crashed.beforeToolCall(pay);
    // A first resume stops at the payment; a person checks the bank and approves it.
    const stopped = await SessionRecorder.resume({ store, ...address, actor });
    const refused = await stopped.beforeToolCall(pay).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "unresolved-attempt" });
    await stopped.approve(
      (refused as { attempt: Attempt }).attempt,
      "the bank has no such payment",
    );

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    store.fail("tool.requested", "locked");
    const again = await untilRecorded(() => resumed.beforeToolCall(pay));
    expect(again).toMatchObject({ stepId: inFlight.stepId, retryOf: inFlight.attemptId });
    await resumed.toolCompleted(again, { paid: 500 });
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
    await store.close();
  });

  it("a retry() of a call the crashed process retried is the retry of that recorded retry", async () => {
    const store = await open("retried.db");
    const crashed = new SessionRecorder({ store, ...address, actor });
    await crashed.startRun();
    const lookup = { toolCallId: "l1", name: "lookup", args: {}, effect: { idempotent: true } };
    const timedOut = await crashed.beforeToolCall(lookup);
    await crashed.toolFailed(timedOut, new Error("timeout"));
    const inFlight = await crashed.retry(timedOut);

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const answered = await resumed.beforeToolCall(lookup);
    expect(answered.replayed?.status).toBe("failed");
    store.fail("tool.requested", "locked");
    const again = await untilRecorded(() => resumed.retry(answered));
    expect(again).toMatchObject({ stepId: inFlight.stepId, retryOf: inFlight.attemptId });
    await resumed.toolCompleted(again, "found");
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
    await store.close();
  });

  it("a model call met after it is matched with the next recorded call, not a passed-over one", async () => {
    const { store, inFlight } = await modelInFlight("two-calls.db");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    store.fail("model.requested", "locked");
    await expect(
      resumed.beforeModelCall({ request: { prompt: "refund order 7" } }),
    ).rejects.toMatchObject({ code: "store-unavailable" });
    // The caller asks something else: the recorded call is still the next one, so it diverges.
    const other = await resumed
      .beforeModelCall({ request: { prompt: "refund order 8" } })
      .catch((error: unknown) => error);
    expect(LedgerError.isInstance(other, "replay-divergence")).toBe(true);
    expect(other).toMatchObject({ details: { attemptId: inFlight.attemptId } });
    await store.close();
  });
});

describe("a resumed run's tool call retried, its request's reply lost, asked again", () => {
  it("adopts the stored retry, and a sub-agent it runs again adopts the recorded child run", async () => {
    const store = await open("adopted-child.db");
    const crashed = new SessionRecorder({ store, ...address, actor });
    await crashed.startRun();
    const research = { name: "research", args: { topic: "refunds" }, effect: { idempotent: true } };
    const inFlight = await crashed.beforeToolCall(research);
    const sub: Actor = { type: "agent", id: "researcher" };
    const child = crashed.child({ actor: sub, causedByEventId: inFlight.requestedEventId });
    await child.startRun();

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    store.fail("tool.requested", "lost");
    const again = await untilRecorded(() => resumed.beforeToolCall(research));
    expect(again).toMatchObject({ retryOf: inFlight.attemptId });
    // The tool runs the sub-agent again, caused by its new attempt: the crashed one's child run.
    const adopted = resumed.child({ actor: sub, causedByEventId: again.requestedEventId });
    expect(adopted.runId).toBe(child.runId);
    await store.close();
  });
});
