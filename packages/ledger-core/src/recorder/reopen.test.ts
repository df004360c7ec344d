import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError, StoreUnavailableError } from "../events/errors.js";
import { verifyRun } from "../inspect/verify-run.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { actor, address, phases, request } from "./reopen.test.data.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-reopen-", afterAll);

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

const stores: [string, () => Promise<EventStore>][] = [
  ["memory", async () => new MemoryEventStore()],
  [
    "SQLite",
    async () => {
      const store = new SqliteEventStore({ path: join(dir, `${crypto.randomUUID()}.db`) });
      await store.init();
      return store;
    },
  ],
];

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
