import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LedgerError, StoreUnavailableError } from "../events/errors.js";
import { verifyRun } from "../inspect/verify-run.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { memoryAndSqlite } from "./memory-and-sqlite.test.data.js";
import { actor, address, phases, request } from "./reopen.test.data.js";
import { RunLog, setRunLogBudget } from "./run-log.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-reopen-", { beforeAll, afterAll });

/** What a recorder's store calls read, from now on. */
function watchReads(store: EventStore) {
  const reads = { runFrom: [] as number[], blobs: 0, runLists: 0 };
  const { readRun, getBlob, getBlobs, listRuns } = store;
  store.readRun = (request) => {
    // (A resume also reads the first event of each child run, to adopt them.)
    if (request.runId === address.runId) reads.runFrom.push(request.fromSeq ?? 0);
    return readRun.call(store, request);
  };
  store.getBlob = (ref) => {
    reads.blobs++;
    return getBlob.call(store, ref);
  };
  if (getBlobs)
    store.getBlobs = (refs) => {
      reads.blobs += refs.length;
      return getBlobs.call(store, refs);
    };
  store.listRuns = (sessionId) => {
    reads.runLists++;
    return listRuns.call(store, sessionId);
  };
  return {
    reads,
    reset() {
      reads.runFrom = [];
      reads.blobs = 0;
      reads.runLists = 0;
    },
  };
}

/** Everything a recorder continues its run from, as its public surface shows it. */
async function continuation(recorder: SessionRecorder, store: EventStore) {
  const replay = recorder.replay;
  if (!replay) throw new Error("not a resumed recorder");
  const toolRequests = (await readWholeRun(store, address)).filter(
    (event) => event.type === "tool.requested",
  );
  return {
    resumed: recorder.resumed,
    status: recorder.status,
    length: recorder.length,
    lastModelCompletionId: recorder.lastModelCompletionId,
    children: recorder.recordedChildRuns(),
    models: replay.modelAttempts,
    tools: replay.unmatchedTools(),
    steps: toolRequests.map((event) => replay.toolStepOf(event.eventId)),
    remaining: replay.remaining,
  };
}

const stores = memoryAndSqlite(dir);

describe.each(stores)("reopen (%s store)", (_name, open) => {
  it("continues the run as a fresh resume does, after pauses, failures, decisions, retries and child runs", async () => {
    const store = await open();
    const watched = watchReads(store);
    let recorder = new SessionRecorder({ store, ...address, actor });
    let reopened = 0;
    for (const phase of phases) {
      await phase(recorder, store);
      const length = (await store.runHead(address)).length;
      const known = recorder.length;
      watched.reset();
      recorder = await recorder.reopen();
      // The first recorder was new: its reopen reads the run. A reopened one reads what other
      // writers appended after its own events, and fetches no blob of its own.
      expect(watched.reads.runFrom).toEqual([reopened === 0 ? 0 : known]);
      if (reopened > 0 && known === length) expect(watched.reads.blobs).toBe(0);
      expect(watched.reads.runLists).toBe(1);
      reopened++;
      const fresh = await SessionRecorder.resume({ store, ...address, actor });
      expect(await continuation(recorder, store)).toEqual(await continuation(fresh, store));
      expect(recorder.length).toBe(length);
    }
    expect(recorder.status).toBe("completed");
    expect(await verifyRun(store, address)).toMatchObject({ ok: true });
    await store.close();
  });
});

describe("reopen", () => {
  it("refuses every later call of the recorder it replaced, whose calls made before are in the run", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    // Made before reopen and not awaited: committed first, and part of what is reopened.
    const before = recorder.beforeModelCall({ request: request(1) });
    const reopened = await recorder.reopen();
    const attempt = await before;
    expect(reopened.replay?.modelAttempts.map((recorded) => recorded.attemptId)).toEqual([
      attempt.attemptId,
    ]);
    for (const call of [
      () => recorder.modelCompleted(attempt, "late"),
      () => recorder.record({ type: "x.note", payload: {} }),
      () => recorder.beforeModelCall({ request: request(2) }),
    ]) {
      const refusal = await call().catch((error: unknown) => error);
      expect(LedgerError.isInstance(refusal, "invalid-argument")).toBe(true);
      expect(String((refusal as Error).message)).toContain("reopen() returned");
    }
    // The attempt is the reopened recorder's to settle.
    await reopened.modelCompleted(attempt, "answer");
    // Reopened twice at once, the run would get two writers: the second is refused.
    const twice = await Promise.allSettled([reopened.reopen(), reopened.reopen()]);
    expect(twice.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected"]);
    expect((await readWholeRun(store, address)).map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
  });

  it("leaves the recorder as it was when reopening fails", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const readRun = store.readRun;
    store.readRun = () => Promise.reject(new StoreUnavailableError("database is down (test)"));
    await expect(recorder.reopen()).rejects.toMatchObject({ code: "store-unavailable" });
    store.readRun = readRun;
    await recorder.record({ type: "x.note", payload: { still: "writing" } });
    const reopened = await recorder.reopen();
    expect(reopened.length).toBe(2);
  });

  it("keeps the recorder's options: its redaction, actor and metadata go on, and its calls replay", async () => {
    const store = new MemoryEventStore();
    const redact = (payload: unknown) =>
      JSON.parse(JSON.stringify(payload).replaceAll("hunter2", "[secret]"));
    const options = { store, ...address, actor, redact, metadata: { host: "h1" } };
    const first = new SessionRecorder(options);
    await first.startRun();
    const login = { toolCallId: "login-1", name: "login", args: { password: "hunter2" } };
    await first.toolCompleted(await first.beforeToolCall(login), "welcome hunter2");
    const reopened = await (await first.reopen()).reopen();
    // Matched by the hash of the redacted arguments, answered with the redacted result.
    const again = await reopened.beforeToolCall(login);
    expect(again.replayed).toMatchObject({ status: "completed", result: "welcome [secret]" });
    await reopened.toolCompleted(
      await reopened.beforeToolCall({ ...login, toolCallId: "login-2" }),
      "hunter2 again",
    );
    const events = await readWholeRun(store, address);
    expect(JSON.stringify(events)).not.toContain("hunter2");
    expect(events.at(-1)).toMatchObject({ actor, metadata: { host: "h1" } });
  });

  it("of a recorder resumed with resolve: false, gives the events as stored, as such a resume does", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    await first.modelCompleted(await first.beforeModelCall({ request: request(3) }), "ok");
    const stored = await SessionRecorder.resume({ store, ...address, actor, resolve: false });
    stored.replay?.skipAll();
    await stored.modelCompleted(await stored.beforeModelCall({ request: request(4) }), "ok");
    const reopened = await (await stored.reopen()).reopen();
    const fresh = await SessionRecorder.resume({ store, ...address, actor, resolve: false });
    expect(reopened.replay?.modelAttempts).toEqual(fresh.replay?.modelAttempts);
    expect(JSON.stringify(reopened.replay?.modelAttempts)).toContain('"$ledger":"list"');
  });

  it("of a run the ledger does not hold is not-found", async () => {
    const recorder = new SessionRecorder({ store: new MemoryEventStore(), ...address, actor });
    await expect(recorder.reopen()).rejects.toMatchObject({ code: "not-found" });
  });
});

describe("reopen past the budget of what a recorder keeps (RunLog)", () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
    vi.restoreAllMocks();
  });

  /** A tool result of 16 KiB, `n` making each one different: it goes to a blob of its own. */
  const result = (n: number) => `result ${n}: ${"0123456789abcdef".repeat(1024)}`;

  it("drops the log once it holds more than the budget: the next reopen reads the run, and continues it as a resume does", async () => {
    const budget = 64 * 1024;
    restore = setRunLogBudget(budget);
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    const keep = vi.spyOn(RunLog, "keep");
    let recorder = await first.reopen();
    const log = keep.mock.results.at(-1)?.value as RunLog | undefined;
    if (!log) throw new Error("a reopened recorder of a short run keeps it");
    for (let n = 1; n <= 8; n++) {
      const call = await recorder.beforeToolCall({
        toolCallId: `fetch-${n}`,
        name: "fetch",
        args: { n },
      });
      await recorder.toolCompleted(call, result(n));
      expect(log.heldBytes).toBeLessThanOrEqual(budget);
    }
    // 128 KiB of results committed: the log let go of all of it.
    expect(log.heldBytes).toBe(0);
    expect(log.keptSoFar()).toBeUndefined();

    const watched = watchReads(store);
    recorder = await recorder.reopen();
    expect(watched.reads.runFrom).toEqual([0]);
    const fresh = await SessionRecorder.resume({ store, ...address, actor });
    expect(await continuation(recorder, store)).toEqual(await continuation(fresh, store));
    // The whole run is over the budget: that recorder keeps none either, and reads it again.
    expect(keep.mock.results.at(-1)?.value).toBeUndefined();
    await recorder.record({ type: "x.note", payload: { after: "the budget" } });
    watched.reset();
    recorder = await recorder.reopen();
    expect(watched.reads.runFrom).toEqual([0]);
    expect(recorder.length).toBe((await store.runHead(address)).length);
    // Under the budget again (raised), a reopen keeps what it read: the next reads only the tail.
    restore();
    restore = undefined;
    recorder = await recorder.reopen();
    const known = recorder.length;
    watched.reset();
    recorder = await recorder.reopen();
    expect(watched.reads.runFrom).toEqual([known]);
    expect(watched.reads.blobs).toBe(0);
  });

  it("records the same run as a recorder whose log was kept, reading it whole once the log outgrew the budget", async () => {
    /** The phases, reopened after each: how each reopen read the run, what the run holds. */
    async function record() {
      const store = new MemoryEventStore();
      const watched = watchReads(store);
      let recorder = new SessionRecorder({ store, ...address, actor });
      const reads: string[] = [];
      for (const phase of phases) {
        await phase(recorder, store);
        const known = recorder.length;
        watched.reset();
        recorder = await recorder.reopen();
        reads.push(watched.reads.runFrom[0] === 0 ? "whole" : `from ${known}`);
        const fresh = await SessionRecorder.resume({ store, ...address, actor });
        expect(await continuation(recorder, store)).toEqual(await continuation(fresh, store));
      }
      // As stored: content-addressed, so the same compaction (the same message lists extended,
      // no blob put twice) gives the same payloads and refs. (An error's stack names the line
      // this function was called from.)
      const withoutStacks = (key: string, value: unknown) => (key === "stack" ? "…" : value);
      const events = (await readWholeRun(store, address)).map(
        ({ type, actor, payload, evidenceRefs }) =>
          JSON.stringify({ type, actor, payload, evidenceRefs }, withoutStacks),
      );
      return { reads, events };
    }
    const keep = vi.spyOn(RunLog, "keep");
    const kept = await record();
    expect(kept.reads.slice(1).every((read) => read.startsWith("from"))).toBe(true);
    // Each log's size as its recorder was reopened: the first held the run through the second
    // phase, the next through the third. A budget between them is outgrown in the third phase.
    const [throughSecond, throughThird] = keep.mock.results.map(
      (made) => (made.value as RunLog).heldBytes,
    );
    if (throughSecond === undefined || throughThird === undefined)
      throw new Error("a log after each reopen");
    restore = setRunLogBudget(Math.floor((throughSecond + throughThird) / 2));
    const bounded = await record();
    expect(bounded.reads).toEqual(kept.reads.slice(0, 2).concat(["whole", "whole", "whole"]));
    expect(bounded.events).toEqual(kept.events);
  });
});
