import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { resolveEvents } from "../compact/resolve.js";
import { LedgerError } from "../events/errors.js";
import type { JsonValue } from "../events/json.js";
import type { Actor, NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun, readWholeSession } from "../store/read-all.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { memoryAndSqlite, watched } from "./memory-and-sqlite.test.data.js";
import type { Redaction } from "./redact.js";
import { SessionRecorder } from "./session-recorder.js";

// `recordAll`: events that must not be seen one without the others (a person's decisions on
// several calls, each of which ends a pause) are one append, or none of them is written.

const dir = scratchDirectory("agent-ledger-together-", { beforeAll, afterAll });
const actor: Actor = { type: "human", id: "reviewer" };
const address = { sessionId: "s1", runId: "r1" };
/** 50 KB: far over the default threshold (4096 bytes). */
const long = "lorem ipsum ".repeat(4200);

const stores = memoryAndSqlite(dir);

/** A started run on a fresh store (`redact` given to its recorder), its appends watched. */
async function startedRun(open: () => Promise<EventStore>, options: { redact?: Redaction } = {}) {
  const store = await open();
  onTestFinished(() => store.close());
  const recorder = new SessionRecorder({ store, ...address, actor, ...options });
  await recorder.startRun({ task: "review" });
  await recorder.record({ type: "x.note", payload: { before: true } });
  return { store, recorder, ...watched(store) };
}

/** Three decisions, the second one `second`'s payload. */
function decisions(second: unknown): NewEvent[] {
  return [
    { type: "x.decision", payload: { callId: "a", approved: true } },
    { type: "x.decision", payload: second as JsonValue },
    { type: "x.decision", payload: { callId: "c", approved: true } },
  ];
}

/** The run and the session as the store holds them. */
async function held(store: EventStore) {
  return {
    run: await readWholeRun(store, address),
    session: await readWholeSession(store, address.sessionId),
  };
}

function refusal(promise: Promise<unknown>): Promise<LedgerError> {
  return promise.then(
    () => {
      throw new Error("expected a refusal");
    },
    (error: unknown) => {
      if (!LedgerError.isInstance(error)) throw error;
      return error;
    },
  );
}

describe.each(stores)("recordAll (%s)", (_, open) => {
  it("a redact function that throws for the middle event: invalid-argument saying which, nothing written", async () => {
    const redact: Redaction = (payload) => {
      if ((payload as { callId?: unknown } | null)?.callId === "b")
        throw new Error("cannot redact call b");
      return payload;
    };
    const { store, recorder, appends } = await startedRun(open, { redact });
    const before = await held(store);

    const error = await refusal(
      recorder.recordAll({ events: decisions({ callId: "b", approved: false }) }),
    );
    // Nothing of the list was written: the calls before and after it are not decided.
    expect(await held(store)).toEqual(before);
    expect(appends).toEqual([]);
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.redact" });
    expect(error.details.index).toBe(1);
    expect(error.message).toContain("the redact function threw for a x.decision payload");
    expect(error.message).toContain("cannot redact call b");
    expect(error.message).toContain("$.events[1], event 2 of the 3 recorded together");
    expect((error.cause as Error).cause).toMatchObject({ message: "cannot redact call b" });

    // The recorder goes on from where it was.
    const next = await recorder.record({ type: "x.note", payload: { after: true } });
    expect(next.seq).toBe(before.run.length);
  });

  it("a redact function that throws for the middle event's metadata: the same, nothing written", async () => {
    const redact: Redaction = (value, context) => {
      if (context.part === "metadata" && JSON.stringify(value).includes("ticket-9"))
        throw new Error("cannot redact ticket-9");
      return value;
    };
    const { store, recorder, appends } = await startedRun(open, { redact });
    const before = await held(store);
    const events = decisions({ callId: "b", approved: false });
    events[1] = { ...(events[1] as NewEvent), metadata: { ticket: "ticket-9" } };

    const error = await refusal(recorder.recordAll({ events }));
    expect(await held(store)).toEqual(before);
    expect(appends).toEqual([]);
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.redact" });
    expect(error.details.index).toBe(1);
    expect(error.message).toContain("cannot redact ticket-9");
    expect(error.message).toContain("$.events[1], event 2 of the 3 recorded together");
  });

  it.each([
    ["a function", { callId: "b", message: () => "no" }, "a function"],
    ["undefined", { callId: "b", message: undefined }, "undefined"],
  ])(
    "a payload with %s inside, in the middle: non-serializable at its path, nothing written",
    async (_, second, what) => {
      const { store, recorder, appends } = await startedRun(open);
      const before = await held(store);

      const error = await refusal(recorder.recordAll({ events: decisions(second) }));
      expect(await held(store)).toEqual(before);
      expect(appends).toEqual([]);
      expect(error).toMatchObject({
        code: "non-serializable",
        path: "$.events[1].payload.message",
      });
      expect(error.message).toContain(what);
    },
  );

  it("every event good: one append, stored contiguously and returned in order", async () => {
    const { store, recorder, appends } = await startedRun(open);
    const events = decisions({ callId: "b", approved: false });

    const stored = await recorder.recordAll({ events });
    expect(appends).toHaveLength(1);
    expect(appends[0]?.events.map((event) => event.payload)).toEqual(
      events.map((event) => event.payload),
    );
    expect(stored.map((event) => [event.seq, event.payload])).toEqual([
      [2, { callId: "a", approved: true }],
      [3, { callId: "b", approved: false }],
      [4, { callId: "c", approved: true }],
    ]);
    const cursors = stored.map((event) => event.commitCursor);
    expect(cursors).toEqual([cursors[0], (cursors[0] as number) + 1, (cursors[0] as number) + 2]);
    expect(stored.every((event) => event.actor?.id === "reviewer")).toBe(true);
    const run = await readWholeRun(store, address);
    expect(run.slice(2)).toEqual(stored);
    expect(recorder.length).toBe(5);
    // The caller's objects are theirs: nothing was added to them.
    expect(events[0]).toEqual({ type: "x.decision", payload: { callId: "a", approved: true } });
  });

  it("concurrent record calls still share the append (group commit), the list in one piece", async () => {
    const { store, recorder, appends } = await startedRun(open);
    const [first, together, last] = await Promise.all([
      recorder.record({ type: "x.note", payload: { n: 1 } }),
      recorder.recordAll({ events: decisions({ callId: "b", approved: false }) }),
      recorder.record({ type: "x.note", payload: { n: 2 } }),
    ]);
    // The two records went out together, and the list whole, in one append (with them or not:
    // that depends on when each call reached the queue).
    const batchOf = (event: { eventId: string }) =>
      appends.findIndex((request) => request.events.some((sent) => sent.eventId === event.eventId));
    expect(batchOf(first)).toBe(batchOf(last));
    const list = appends[batchOf(together[0] as { eventId: string })]?.events ?? [];
    const at = list.findIndex((sent) => sent.eventId === together[0]?.eventId);
    expect(list.slice(at, at + 3).map((sent) => sent.eventId)).toEqual(
      together.map((event) => event.eventId),
    );
    expect(together.map((event) => event.seq - (together[0]?.seq ?? 0))).toEqual([0, 1, 2]);
    expect(appends.length).toBeLessThan(3);
    const run = await readWholeRun(store, address);
    expect(
      run
        .slice(2)
        .map((event) => event.eventId)
        .sort(),
    ).toEqual([first, ...together, last].map((event) => event.eventId).sort());
  });

  it("one event the store refuses fails the whole list, and only it: a concurrent record is committed", async () => {
    const { store, recorder } = await startedRun(open);
    const events = decisions({ callId: "b", approved: false });
    events[2] = { type: "decision" as never, payload: { callId: "c" } };
    const [note, together] = await Promise.allSettled([
      recorder.record({ type: "x.note", payload: { n: 1 } }),
      recorder.recordAll({ events }),
    ]);
    expect(note.status).toBe("fulfilled");
    expect(together).toMatchObject({
      status: "rejected",
      reason: { code: "invalid-event", path: "$.events[2].type" },
    });
    const run = await readWholeRun(store, address);
    expect(run.map((event) => event.type)).toEqual(["run.started", "x.note", "x.note"]);
  });

  it("a large payload in the list goes to a blob, stored by the same append", async () => {
    const { store, recorder, appends } = await startedRun(open);
    const big = { callId: "b", approved: false, message: long };
    const stored = await recorder.recordAll({ events: decisions(big) });
    expect(appends).toHaveLength(1);
    expect(appends[0]?.blobs).toHaveLength(1);
    expect(stored[1]?.evidenceRefs).toHaveLength(1);
    expect(JSON.stringify(stored[1]?.payload).length).toBeLessThan(1000);
    const ref = stored[1]?.evidenceRefs?.[0] as string;
    expect(await store.getBlob(ref)).toBeDefined();
    const read = await resolveEvents(store, await readWholeRun(store, address));
    expect(read.slice(2).map((event) => event.payload)).toEqual([
      { callId: "a", approved: true },
      big,
      { callId: "c", approved: true },
    ]);
  });

  it("a reply lost after the commit: retried as the same events, stored once", async () => {
    const { store, recorder, faults } = await startedRun(open);
    faults.loseReplies = 1;
    const stored = await recorder.recordAll({
      events: decisions({ callId: "b", approved: false }),
    });
    expect(stored.map((event) => event.seq)).toEqual([2, 3, 4]);
    const run = await readWholeRun(store, address);
    expect(run.map((event) => event.eventId).slice(2)).toEqual(
      stored.map((event) => event.eventId),
    );
    expect(run).toHaveLength(5);
  });

  it.each([
    ["an outcome", { type: "tool.completed", attemptId: "t1", payload: { result: 1 } }],
    ["a run's end", { type: "run.completed", payload: { output: "done" } }],
  ])(
    "%s in the list is refused (invalid-argument at its type), nothing written",
    async (_, event) => {
      const { store, recorder } = await startedRun(open);
      const before = await held(store);
      const events = decisions({ callId: "b", approved: false });
      events.splice(1, 0, event as NewEvent);
      const error = await refusal(recorder.recordAll({ events }));
      expect(error).toMatchObject({ code: "invalid-argument", path: "$.events[1].type" });
      expect(error.message).toContain(event.type);
      expect(await held(store)).toEqual(before);
    },
  );

  it("an empty list writes nothing; a list that is no array is refused", async () => {
    const { recorder, appends } = await startedRun(open);
    expect(await recorder.recordAll({ events: [] })).toEqual([]);
    expect(appends).toEqual([]);
    const error = await refusal(recorder.recordAll({ events: "x.note" as never }));
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.events" });
    const sparse: NewEvent[] = [];
    sparse[1] = { type: "x.note" };
    const hole = await refusal(recorder.recordAll({ events: sparse }));
    expect(hole).toMatchObject({ code: "invalid-argument", path: "$.events[0]" });
  });
});
