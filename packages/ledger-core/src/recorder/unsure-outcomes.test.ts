import { describe, expect, it } from "vitest";
import { LedgerError, StoreUnavailableError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { AppendRequest, ReadRunRequest } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "refunds" };
const address = { sessionId: "s", runId: "r" };

/**
 * A store whose connection fails: `refuse` appends fail before reaching it, `loseReplies`
 * appends commit and then fail, `readsDown` reads fail; all as `store-unavailable` that does
 * not say whether anything was written, as a dropped server connection does.
 */
class FlakyStore extends MemoryEventStore {
  refuse = 0;
  loseReplies = 0;
  readsDown = 0;
  override async append(request: AppendRequest) {
    if (this.refuse > 0) {
      this.refuse--;
      throw new StoreUnavailableError("connection refused");
    }
    const result = await super.append(request);
    if (this.loseReplies > 0) {
      this.loseReplies--;
      throw new StoreUnavailableError("connection reset after commit");
    }
    return result;
  }
  override async readRun(request: ReadRunRequest) {
    if (this.readsDown > 0) {
      this.readsDown--;
      throw new StoreUnavailableError("connection refused");
    }
    return super.readRun(request);
  }
}

async function typesOf(store: MemoryEventStore): Promise<string[]> {
  return (await readWholeRun(store, address)).map((event) => event.type);
}

/** A run on a FlakyStore (still answering) with a payment requested and no outcome yet. */
async function payInFlight() {
  const store = new FlakyStore();
  const recorder = new SessionRecorder({ store, ...address, actor });
  await recorder.startRun();
  const pay = await recorder.beforeToolCall({ toolCallId: "p", name: "pay", args: {} });
  return { store, recorder, pay };
}

describe("an outcome whose append failed with its outcome unknown", () => {
  it("is recorded again once reading the run back shows it did not get in", async () => {
    const { store, recorder, pay } = await payInFlight();
    // Every try of the queue fails before the append reached the store.
    store.refuse = 3;
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "store-unavailable",
      nothingWritten: false,
    });
    const completed = await recorder.toolCompleted(pay, "paid");
    expect(completed).toMatchObject({ type: "tool.completed", seq: 2 });
    await recorder.completeRun("done");
    expect(await typesOf(store)).toEqual([
      "run.started",
      "tool.requested",
      "tool.completed",
      "run.completed",
    ]);
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
  });

  it("not recorded again, keeps the run from being completed over it", async () => {
    const { store, recorder, pay } = await payInFlight();
    store.refuse = 3;
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "store-unavailable",
    });
    const refused = await recorder.completeRun("done").catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "unresolved-attempt", attemptId: pay.attemptId });
    expect((refused as Error).message).toContain(
      `tool call pay (p) attempt ${pay.attemptId}: its tool.completed did not get in`,
    );
    expect(await typesOf(store)).toEqual(["run.started", "tool.requested"]);
    await recorder.toolCompleted(pay, "paid");
    await recorder.completeRun("done");
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
  });

  it("is refused a second time once the read shows it stored, saying so", async () => {
    const { store, recorder, pay } = await payInFlight();
    store.loseReplies = 3;
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "store-unavailable",
    });
    const second = await recorder.toolCompleted(pay, "paid").catch((error: unknown) => error);
    expect(LedgerError.isInstance(second, "invalid-argument")).toBe(true);
    expect((second as Error).message).toBe(
      `$: attempt ${pay.attemptId} already has an outcome: its tool.completed is stored (at seq 2), though its append failed with the store unavailable (the reply was lost; reading the run back found it), so it is not recorded a second time: go on with the run`,
    );
    await recorder.completeRun("done");
    expect(await typesOf(store)).toEqual([
      "run.started",
      "tool.requested",
      "tool.completed",
      "run.completed",
    ]);
  });

  it("while the read back fails too, the second try is refused as unwritten and can be made again", async () => {
    const { store, recorder, pay } = await payInFlight();
    store.refuse = 3;
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "store-unavailable",
    });
    store.readsDown = 1;
    // Nothing of this call was sent: the store may take it again (nothingWritten).
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "store-unavailable",
      nothingWritten: true,
    });
    await recorder.toolCompleted(pay, "paid");
    expect(await typesOf(store)).toEqual(["run.started", "tool.requested", "tool.completed"]);
  });
});
