import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashJson } from "../events/canonical.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import type { AppendRequest, AppendResult, EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { words } from "./compact.test.data.js";
import { asMarker } from "./marker.js";
import { resolveEvents, resolvePayload } from "./resolve.js";

const actor = { type: "agent" as const, id: "agent" };
const folder = scratchDirectory("ledger-compact-", { beforeAll, afterAll });

/** Counts blob writes, the way a reviewer would check "no extra round trips". */
class CountingStore extends MemoryEventStore {
  /** Calls that stored blobs: a put, or an append that carried them. */
  putCalls = 0;
  putContents = 0;
  /** Of those, puts of their own (a round trip before the append that names them). */
  separatePuts = 0;
  override async append(request: AppendRequest): Promise<AppendResult> {
    const blobs = request.blobs?.length ?? 0;
    if (blobs > 0) {
      this.putCalls++;
      this.putContents += blobs;
    }
    return super.append(request);
  }
  override async putBlob(content: Uint8Array | string): Promise<string> {
    this.putCalls++;
    this.separatePuts++;
    this.putContents++;
    return super.putBlob(content);
  }
  override async putBlobs(contents: (Uint8Array | string)[]): Promise<string[]> {
    this.putCalls++;
    this.separatePuts++;
    this.putContents += contents.length;
    const refs: string[] = [];
    for (const content of contents) refs.push(await super.putBlob(content));
    return refs;
  }
}

const system = { role: "system", content: `You are careful. ${words(1, 1500)}` };

/** A conversation that re-sends its whole history every turn, as agents do. */
async function converse(recorder: SessionRecorder, turns: number, from = 0) {
  const history: JsonObject[] = [system];
  const requests: JsonObject[] = [];
  for (let turn = 0; turn < from + turns; turn++) {
    history.push({ role: "user", content: `question ${turn}: ${words(turn + 10, 300)}` });
    const request = { model: "m", temperature: 0, messages: history.slice() };
    const answer = words(turn + 1000, 2000);
    if (turn >= from) {
      const attempt = await recorder.beforeModelCall({ request });
      await recorder.modelCompleted(attempt, { role: "assistant", content: answer });
      requests.push(request);
    }
    history.push({ role: "assistant", content: answer });
  }
  return requests;
}

describe("content-addressed payloads", () => {
  it("stores each message once, lists by structural sharing, and resolves back exactly", async () => {
    const store = new CountingStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const before = store.putCalls;
    expect(before).toBe(0);
    const requests = await converse(recorder, 30);
    // Blobs only with the event that introduced them: never a put per message, and never a
    // put of their own (a round trip in front of the append).
    expect(store.putCalls).toBeLessThanOrEqual(60);
    expect(store.separatePuts).toBe(0);
    // Each turn adds a user message, its list node, and the answer's text: constant per turn.
    expect(store.putContents).toBeLessThan(30 * 4 + 5);
    const stored = await readWholeRun(store, { sessionId: "s", runId: "r" });
    const asked = stored.filter((event) => event.type === "model.requested");
    expect(asked).toHaveLength(30);
    for (const [index, event] of asked.entries()) {
      const request = (event.payload as JsonObject).request as JsonObject;
      expect(asMarker(request.messages as JsonValue)?.$ledger).toBe("list");
      expect(request.model).toBe("m");
      // The event itself stays small however long the history is.
      expect(JSON.stringify(event).length).toBeLessThan(2000);
      expect((event.payload as JsonObject).requestHash).toBe(hashJson(requests[index] as never));
      expect(event.evidenceRefs?.length ?? 0).toBeLessThanOrEqual(4);
    }
    const resolved = await resolveEvents(store, stored);
    expect(
      resolved
        .filter((event) => event.type === "model.requested")
        .map((event) => (event.payload as JsonObject).request),
    ).toEqual(requests);
    const completions = resolved.filter((event) => event.type === "model.completed");
    expect(((completions[3]?.payload ?? {}) as JsonObject).response).toEqual({
      role: "assistant",
      content: words(1003, 2000),
    });
    // The assistant text of a completion and the same text in the next request are one blob.
    const completionRef = asMarker(
      (
        ((stored.find((event) => event.type === "model.completed")?.payload ?? {}) as JsonObject)
          .response as JsonObject
      ).content as JsonValue,
    )?.ref;
    expect(completionRef).toBeDefined();
    expect(asked[1]?.evidenceRefs).not.toContain(completionRef);
    expect((await verifyRun(store, { sessionId: "s", runId: "r" })).ok).toBe(true);
  });

  it("puts nothing and indexes nothing for a small request without a message list", async () => {
    const store = new CountingStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const attempt = await recorder.beforeModelCall({ request: { model: "m", input: "hi" } });
    await recorder.modelCompleted(attempt, { text: "hello" });
    expect(store.putCalls).toBe(0);
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    expect(events.every((event) => event.evidenceRefs === undefined)).toBe(true);
    expect(((events[1]?.payload ?? {}) as JsonObject).request).toEqual({ model: "m", input: "hi" });
  });

  it("keeps a short message list inline until the conversation grows (no blob write per call)", async () => {
    const store = new CountingStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const short = {
      model: "m",
      messages: [{ role: "user", content: "What is the weather in Lisbon?" }],
    };
    const attempt = await recorder.beforeModelCall({ request: short });
    await recorder.modelCompleted(attempt, { text: "sunny" });
    expect(store.putCalls).toBe(0);
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    expect(((events[1]?.payload ?? {}) as JsonObject).request).toEqual(short);
    // A long history then goes to a list node (and so to the blob store).
    const long = {
      model: "m",
      messages: Array.from({ length: 40 }, (_, index) => ({
        role: "user",
        content: `message ${index} ${words(index, 20)}`,
      })),
    };
    await recorder.beforeModelCall({ request: long });
    expect(store.putCalls).toBe(1);
    const last = (await readWholeRun(store, { sessionId: "s", runId: "r" })).at(-1);
    expect(
      asMarker((((last?.payload ?? {}) as JsonObject).request as JsonObject).messages as JsonValue)
        ?.$ledger,
    ).toBe("list");
  });

  it("escapes user objects that use the marker key, and compact: false stores inline", async () => {
    const store = new MemoryEventStore();
    const tricky = { $ledger: "text", ref: `sha256:${"0".repeat(64)}`, note: "mine" };
    for (const compact of [undefined, false] as const) {
      const runId = `r-${String(compact)}`;
      const recorder = new SessionRecorder({ store, sessionId: "s", runId, actor, compact });
      const request = { messages: [{ role: "user", content: "hi", data: tricky }], extra: tricky };
      const attempt = await recorder.beforeModelCall({ request });
      const stored = await readWholeRun(store, { sessionId: "s", runId });
      const payload = stored[0]?.payload as JsonObject;
      if (compact === false) expect((payload.request as JsonObject).messages).toBeInstanceOf(Array);
      expect(payload.requestHash).toBe(attempt.requestHash);
      expect(await resolvePayload(store, payload.request as JsonValue)).toEqual(request);
    }
  });

  it("shares blobs across sessions: the same system prompt is one row", async () => {
    const path = join(folder, "shared.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const refs = new Set<string>();
    for (const sessionId of ["a", "b"]) {
      const recorder = new SessionRecorder({ store, sessionId, runId: "r", actor });
      await converse(recorder, 3);
      for (const event of await readWholeRun(store, { sessionId, runId: "r" }))
        for (const ref of event.evidenceRefs ?? []) refs.add(ref);
    }
    await store.close();
    const raw = new Database(path, { readonly: true });
    const rows = raw.prepare("SELECT 'sha256:' || lower(hex(digest)) AS ref FROM blobs").all() as {
      ref: string;
    }[];
    const index = raw.prepare("SELECT count(*) AS n FROM blob_refs GROUP BY digest").all() as {
      n: number;
    }[];
    raw.close();
    expect(rows.length).toBe(refs.size);
    // Both sessions name every blob of the identical conversation; each is stored once.
    expect(index.every((row) => row.n === 2)).toBe(true);
    expect(new Set(rows.map((row) => row.ref))).toEqual(refs);
  });

  it("a call on a run the recorder closed is run-closed, and its append stores no blob", async () => {
    const path = join(folder, "closed.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await converse(recorder, 2);
    await recorder.completeRun("done");
    const blobRows = () => {
      const raw = new Database(path, { readonly: true });
      const { n } = raw.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number };
      raw.close();
      return n;
    };
    const before = blobRows();
    const fresh = `a message no blob holds yet ${"x".repeat(5_000)}`;
    await expect(
      recorder.beforeModelCall({
        request: { model: "m", messages: [{ role: "user", content: fresh }] },
      }),
    ).rejects.toMatchObject({ code: "run-closed" });
    await expect(
      recorder.beforeToolCall({ toolCallId: "t", name: "big", args: { text: fresh.repeat(60) } }),
    ).rejects.toMatchObject({ code: "run-closed" });
    expect(blobRows()).toBe(before);
    await store.close();
  });

  it("resumes with resolved outcomes and extends the recorded list", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await first.startRun();
    const requests = await converse(first, 3);
    const resumed = await SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor });
    for (const request of requests) {
      const attempt = await resumed.beforeModelCall({ request });
      expect(attempt.replayed?.status).toBe("completed");
      expect(attempt.request).toEqual(request);
      expect(attempt.replayed?.status === "completed" && attempt.replayed.result).toEqual({
        role: "assistant",
        content: expect.stringContaining("ledger") as unknown as string,
      });
    }
    const raw = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor,
      resolve: false,
    });
    const rawAttempt = await raw.beforeModelCall({ request: requests[0] });
    expect(asMarker((rawAttempt.request as JsonObject).messages as JsonValue)?.$ledger).toBe(
      "list",
    );
    // The next live call stores only what it appends: its list node names the previous one.
    const [next] = await converse(resumed, 1, 3);
    await resumed.beforeModelCall({ request: next });
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    const lists = events
      .filter((event) => event.type === "model.requested")
      .map(
        (event) =>
          asMarker(((event.payload as JsonObject).request as JsonObject).messages as JsonValue)
            ?.ref as string,
      );
    const lastNode = JSON.parse(
      new TextDecoder().decode(await store.getBlob(lists.at(-1) as string)),
    ) as { prev: string; items: string[] };
    expect(lastNode.prev).toBe(lists.at(-3));
    expect(lastNode.items).toHaveLength(2);
  });

  it("inspectSession resolves requests and outcomes unless asked not to", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const [request] = await converse(recorder, 1);
    const inspected = await inspectSession(store, "s");
    const attempt = inspected.runs[0]?.steps[0]?.attempts[0];
    expect(attempt?.request).toEqual(request);
    expect(((attempt?.outcome ?? {}) as JsonObject).content).toEqual(words(1000, 2000));
    const raw = await inspectSession(store, "s", { resolve: false });
    const rawAttempt = raw.runs[0]?.steps[0]?.attempts[0];
    expect(
      asMarker(((rawAttempt?.request ?? {}) as JsonObject).messages as JsonValue),
    ).toBeDefined();
  });

  it("a missing blob is not-found on resolve, never silently empty", async () => {
    const store = new MemoryEventStore();
    const event = {
      payload: { text: { $ledger: "text", ref: `sha256:${"a".repeat(64)}` } },
    } as unknown as LedgerEvent;
    await expect(resolveEvents(store as EventStore, [event])).rejects.toMatchObject({
      code: "not-found",
    });
  });
});
