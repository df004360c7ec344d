import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveEvents } from "../compact/resolve.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { Actor, LedgerEvent } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { messageHistory } from "../projections/message-history.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { memoryAndSqlite } from "./memory-and-sqlite.test.data.js";
import { SessionRecorder } from "./session-recorder.js";

// §8: payloads above the threshold go to the blob store, not only a call's. A run's input and
// output, its inputs, its checkpoints (a whole serialized RunState at every interruption) and
// an adapter's custom events are stored as references and read back as given.

const dir = scratchDirectory("agent-ledger-run-blobs-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "planner" };
const address = { sessionId: "s1", runId: "r1" };
const noBlob = `sha256:${"9".repeat(64)}`;
/** 50 KB: far over the default threshold (4096 bytes). */
const long = "lorem ipsum ".repeat(4200);

const stores = memoryAndSqlite(dir);

/** A large string, a large object and a user object with a `$ledger` key of its own. */
function payload(tag: string): JsonObject {
  return {
    tag,
    text: `${tag}: ${long}`,
    rows: Array.from({ length: 200 }, (_, index) => ({ index, name: `${tag}-row-${index}` })),
    looksLikeAMarker: { $ledger: "json", ref: noBlob, filler: long },
  };
}

/** Records one run with a large payload in every place that takes one. */
async function recordRun(recorder: SessionRecorder): Promise<JsonValue[]> {
  const given = ["start", "input", "checkpoint", "custom", "output"].map(payload);
  const runState = `{"$schemaVersion":"1.0","state":"${long}"}`;
  await recorder.startRun(given[0]);
  await recorder.recordInput(given[1]);
  await recorder.checkpoint(given[2]);
  await recorder.checkpoint(runState);
  await recorder.record({ type: "x.app.custom", payload: given[3] });
  await recorder.completeRun(given[4]);
  return [
    given[0] as JsonValue,
    { input: given[1] as JsonValue },
    given[2] as JsonValue,
    runState,
    given[3] as JsonValue,
    { output: given[4] as JsonValue },
  ];
}

async function blobsOf(store: EventStore, events: LedgerEvent[]): Promise<string[]> {
  const refs = events.flatMap((event) => event.evidenceRefs ?? []);
  const decoder = new TextDecoder();
  return Promise.all(refs.map(async (ref) => decoder.decode(await store.getBlob(ref))));
}

describe.each(stores)("run payloads over the threshold go to blobs (%s)", (_, open) => {
  it("stores each as references named in evidenceRefs, and every read gives it back", async () => {
    const store = await open();
    const expected = await recordRun(new SessionRecorder({ store, ...address, actor }));
    const stored = await readWholeRun(store, address);
    expect(stored.map((event) => event.type)).toEqual([
      "run.started",
      "input.received",
      "checkpoint.saved",
      "checkpoint.saved",
      "x.app.custom",
      "run.completed",
    ]);
    for (const event of stored) {
      const json = JSON.stringify(event.payload);
      expect(json.length, event.type).toBeLessThan(1000);
      expect(event.evidenceRefs?.length, event.type).toBeGreaterThan(0);
      for (const ref of event.evidenceRefs ?? []) expect(json, event.type).toContain(ref);
    }
    // A serialized RunState (a string) is a reference itself.
    expect(stored[3]?.payload).toEqual({ $ledger: "text", ref: stored[3]?.evidenceRefs?.[0] });
    const read = await resolveEvents(store, stored);
    expect(read.map((event) => event.payload)).toEqual(expected);
    // The blob holding the long text is stored once, though six events name it.
    const refs = stored.flatMap((event) => event.evidenceRefs ?? []);
    expect(new Set(refs).size).toBe(refs.length);
    await store.close();
  });

  it("a resumed run gets them back, and its loop re-executed matches them", async () => {
    const store = await open();
    const expected = await recordRun(new SessionRecorder({ store, ...address, actor }));
    for (const resolve of [true, false]) {
      const resumed = await SessionRecorder.resume({ store, ...address, actor, resolve });
      const started = await resumed.startRun(payload("start"));
      const input = await resumed.recordInput(payload("input"));
      const output = await resumed.completeRun(payload("output"));
      if (resolve) {
        expect(started.payload).toEqual(expected[0]);
        expect(input.payload).toEqual(expected[1]);
        expect(output.payload).toEqual(expected[5]);
      }
    }
    await store.close();
  });

  it("inspection and projections read a session whose run payloads are references", async () => {
    const store = await open();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun(payload("start"));
    await recorder.recordInput(`question: ${long}`);
    await recorder.completeRun(payload("output"));
    const stored = await readWholeRun(store, address);
    expect(stored[1]?.evidenceRefs?.length).toBe(1);
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(await messageHistory(store, { sessionId: address.sessionId })).toEqual([
      { role: "user", content: `question: ${long}` },
    ]);
    await store.close();
  });

  it("compact: false keeps them inline, as before", async () => {
    const store = await open();
    const recorder = new SessionRecorder({ store, ...address, actor, compact: false });
    const expected = await recordRun(recorder);
    const stored = await readWholeRun(store, address);
    for (const event of stored) {
      expect(JSON.stringify(event.payload).length, event.type).toBeGreaterThan(50_000);
      expect(event.evidenceRefs, event.type).toBeUndefined();
    }
    const read = await resolveEvents(store, stored);
    expect(read.map((event) => event.payload)).toEqual(expected);
    await store.close();
  });

  it("a smaller threshold of the compact option applies to them too", async () => {
    const store = await open();
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      compact: { thresholdBytes: 100 },
    });
    await recorder.startRun({ note: "x".repeat(200) });
    await recorder.checkpoint({ note: "y".repeat(50) });
    const [started, saved] = await readWholeRun(store, address);
    expect(started?.evidenceRefs?.length).toBe(1);
    expect(saved?.evidenceRefs).toBeUndefined();
    expect(saved?.payload).toEqual({ note: "y".repeat(50) });
    await store.close();
  });

  it("redacts before externalizing: a redacted value never reaches a blob", async () => {
    const store = await open();
    const secret = "sk-SECRET-0123456789";
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: ["**.apiKey"],
    });
    const withSecret = (tag: string) => ({ nested: { apiKey: secret, tag, filler: long } });
    await recorder.startRun(withSecret("start"));
    await recorder.recordInput(withSecret("input"));
    await recorder.checkpoint(withSecret("checkpoint"));
    await recorder.record({ type: "x.app.custom", payload: withSecret("custom") });
    await recorder.completeRun(withSecret("output"));
    const stored = await readWholeRun(store, address);
    const blobs = await blobsOf(store, stored);
    expect(blobs.length).toBeGreaterThan(0);
    for (const blob of blobs) expect(blob).not.toContain(secret);
    expect(JSON.stringify(stored)).not.toContain(secret);
    const read = await resolveEvents(store, stored);
    const redacted = (tag: string) => ({ nested: { apiKey: "[redacted]", tag, filler: long } });
    expect(read.map((event) => event.payload)).toEqual([
      redacted("start"),
      { input: redacted("input") },
      redacted("checkpoint"),
      redacted("custom"),
      { output: redacted("output") },
    ]);
    await store.close();
  });

  it("redacts with a function before externalizing", async () => {
    const store = await open();
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: (value) => JSON.parse(JSON.stringify(value).replaceAll("alice", "[someone]")),
    });
    await recorder.checkpoint({ people: `alice ${long}` });
    await recorder.record({ type: "x.app.custom", payload: { text: `alice said ${long}` } });
    const stored = await readWholeRun(store, address);
    const blobs = await blobsOf(store, stored);
    expect(blobs.length).toBe(2);
    for (const blob of blobs) expect(blob).not.toContain("alice");
    const read = await resolveEvents(store, stored);
    expect(read.map((event) => event.payload)).toEqual([
      { people: `[someone] ${long}` },
      { text: `[someone] said ${long}` },
    ]);
    await store.close();
  });

  it("keeps their blobs while the session lives, and deletes them with it", async () => {
    const store = await open();
    const expected = await recordRun(new SessionRecorder({ store, ...address, actor }));
    await store.collectBlobs({ blobGraceMs: 0 });
    const read = await resolveEvents(store, await readWholeRun(store, address));
    expect(read.map((event) => event.payload)).toEqual(expected);
    const refs = read.flatMap((event) => event.evidenceRefs ?? []);
    expect(refs.length).toBeGreaterThan(0);
    const result = await store.deleteSession(address.sessionId, { blobGraceMs: 0 });
    expect(result.deletedBlobs).toBe(refs.length);
    await store.close();
  });
});
