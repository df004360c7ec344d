import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent } from "../events/types.js";
import { startedRun } from "../recorder/started-run.test.data.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { decodeBody, encodeBody } from "../stores/sqlite/body-codec.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { assertRunIntact, type VerifyRunOptions, verifyRun } from "./verify-run.js";

const dir = scratchDirectory("agent-ledger-verify-", { beforeAll, afterAll });

async function recordRun(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  const { recorder } = await startedRun(store);
  const call = await recorder.beforeToolCall({
    toolCallId: "t1",
    name: "transfer",
    args: { amount: 100 },
  });
  await recorder.toolCompleted(call, { transferred: 100 });
  await recorder.completeRun("done");
  await store.close();
}

describe("verifyRun on a SQLite file edited behind the ledger's back", () => {
  it("reports an intact run as ok", async () => {
    const path = join(dir, "intact.db");
    await recordRun(path);
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({ ok: true, length: 4 });
    // A mistyped run or session is not an intact run.
    await expect(verifyRun(store, { sessionId: "s", runId: "R" })).rejects.toMatchObject({
      code: "not-found",
    });
    await expect(assertRunIntact(store, { sessionId: "t", runId: "r" })).rejects.toMatchObject({
      code: "not-found",
    });
    await store.close();
  });

  it("reports an edited payload as tamper-detected at its seq", async () => {
    const path = join(dir, "edited.db");
    await recordRun(path);
    const raw = new Database(path);
    // A long body is stored compressed (body-codec.ts): edit the JSON, store it the same way.
    const row = raw.prepare("SELECT body FROM events WHERE seq = 1").get() as { body: unknown };
    const json = decodeBody(row.body);
    expect(json).toContain('"amount":100');
    const changed = raw
      .prepare("UPDATE events SET body = ? WHERE seq = 1")
      .run(encodeBody(json.replace('"amount":100', '"amount":1000')));
    expect(changed.changes).toBe(1);
    raw.close();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 1,
    });
    await expect(assertRunIntact(store, { sessionId: "s", runId: "r" })).rejects.toMatchObject({
      code: "tamper-detected",
      badSeq: 1,
    });
    await store.close();
  });

  // Bytes a person edited by hand, or a disk flipped: the row is no longer an event at all.
  // verify says where (not "the store is unreachable", which a caller would retry forever).
  it.each([
    ["bytes of no known format", Buffer.from([0x07, 0x01, 0x02])],
    ["compressed bytes cut short", null],
    ["text that is not JSON", '{"schemaVersion":1,'],
    ["JSON that is not an event", "[1,2]"],
  ])(
    "reports a body that holds %s as tamper-detected at its seq, and reads name it",
    async (_name, body) => {
      const path = join(dir, `unreadable-${String(_name).replace(/ /g, "-")}.db`);
      await recordRun(path);
      const raw = new Database(path);
      const stored = raw.prepare("SELECT body FROM events WHERE seq = 1").get() as {
        body: unknown;
      };
      // The compressed body of seq 1 (a tool request), without its last half.
      expect(Buffer.isBuffer(stored.body)).toBe(true);
      const value =
        body ?? (stored.body as Buffer).subarray(0, (stored.body as Buffer).length >> 1);
      expect(raw.prepare("UPDATE events SET body = ? WHERE seq = 1").run(value).changes).toBe(1);
      const cursor = (
        raw.prepare("SELECT commit_cursor AS c FROM events WHERE seq = 1").get() as { c: number }
      ).c;
      raw.close();
      const store = new SqliteEventStore({ path });
      await store.init();
      const address = { sessionId: "s", runId: "r" };
      expect(await verifyRun(store, address)).toMatchObject({ ok: false, length: 1, badSeq: 1 });
      await expect(assertRunIntact(store, address)).rejects.toMatchObject({
        code: "tamper-detected",
        badSeq: 1,
      });
      await expect(store.readRun(address)).rejects.toMatchObject({
        code: "tamper-detected",
        details: { sessionId: "s", runId: "r", seq: 1 },
        message: expect.stringContaining("at session s, run r, seq 1 cannot be read"),
      });
      await expect(store.readSession({ sessionId: "s" })).rejects.toMatchObject({
        code: "tamper-detected",
        details: { sessionId: "s", commitCursor: cursor },
      });
      // The events before and after it still read.
      expect((await store.readRun({ ...address, limit: 1 })).events).toHaveLength(1);
      expect((await store.readRun({ ...address, fromSeq: 2 })).events).toHaveLength(2);
      await store.close();
    },
  );

  it("reports a deleted last event (the head no longer matches)", async () => {
    const path = join(dir, "truncated.db");
    await recordRun(path);
    const raw = new Database(path);
    raw.prepare("DELETE FROM events WHERE seq = 3").run();
    raw.close();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 3,
    });
    await store.close();
  });
});

/**
 * A run whose tool result (seq 2) and model request (seq 3) are kept in the blob store, and a
 * store-side edit of the blob holding `text`: its row's last byte flipped, or the row deleted.
 */
async function runWithBlobs(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  const { recorder } = await startedRun(store);
  const result = "Transferred 100 to account 42. ".repeat(200);
  const call = await recorder.beforeToolCall({ toolCallId: "t1", name: "transfer", args: {} });
  await recorder.toolCompleted(call, { text: result });
  const question = "What did the transfer do? ".repeat(200);
  const model = await recorder.beforeModelCall({
    request: { model: "m", messages: [{ role: "user", content: question }] },
  });
  await recorder.modelCompleted(model, { content: "It moved 100." });
  await recorder.completeRun("done");
  const resultRef = await store.putBlob(result);
  await store.close();
  return { resultRef };
}

function editBlob(path: string, ref: string, edit: "flip" | "delete"): void {
  const raw = new Database(path);
  const digest = Buffer.from(ref.slice("sha256:".length), "hex");
  if (edit === "delete") {
    expect(raw.prepare("DELETE FROM blobs WHERE digest = ?").run(digest).changes).toBe(1);
  } else {
    const row = raw.prepare("SELECT content FROM blobs WHERE digest = ?").get(digest) as {
      content: Buffer;
    };
    const content = Buffer.from(row.content);
    content[content.length - 1] = (content[content.length - 1] as number) ^ 1;
    raw.prepare("UPDATE blobs SET content = ? WHERE digest = ?").run(content, digest);
  }
  raw.close();
}

describe("verifyRun checks the blobs a run's events name", () => {
  it.each([
    ["flip", "corrupt", "does not hash to its reference"],
    ["delete", "missing", "is not in the store"],
  ] as const)(
    "reports a blob whose row was edited (%s) as %s, with its ref and the seq that names it",
    async (edit, problem, text) => {
      const path = join(dir, `blob-${edit}.db`);
      const { resultRef } = await runWithBlobs(path);
      editBlob(path, resultRef, edit);
      const store = new SqliteEventStore({ path });
      await store.init();
      const address = { sessionId: "s", runId: "r" };
      const result = await verifyRun(store, address);
      expect(result).toEqual({
        ok: false,
        length: 6,
        badSeq: 2,
        blob: { ref: resultRef, problem },
        reason: expect.stringContaining(`blob ${resultRef} named at seq 2 ${text}`),
      });
      await expect(assertRunIntact(store, address)).rejects.toMatchObject({
        code: "tamper-detected",
        badSeq: 2,
      });
      await store.close();
    },
  );

  it("reports an intact run with blobs as ok", async () => {
    const path = join(dir, "blob-intact.db");
    await runWithBlobs(path);
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({ ok: true, length: 6 });
    await store.close();
  });

  it("reads the blobs of a long run in bounded batches, and reports the first one that fails", async () => {
    const { store, recorder } = await startedRun();
    for (let index = 0; index < 700; index++) {
      const call = await recorder.beforeToolCall({ name: "read", args: { index } });
      await recorder.toolCompleted(call, { text: `page ${index} `.repeat(700) });
    }
    const batches: number[] = [];
    const getBlobs = store.getBlobs.bind(store);
    store.getBlobs = async (refs) => {
      batches.push(refs.length);
      return getBlobs(refs);
    };
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({
      ok: true,
      length: 1401,
    });
    expect(batches.reduce((sum, size) => sum + size, 0)).toBe(700);
    expect(Math.max(...batches)).toBeLessThanOrEqual(100);
    // A blob that is not there any more (seq 600 names it), and one later: the first is named.
    const lost = new Set([
      await store.putBlob("page 299 ".repeat(700)),
      await store.putBlob("page 650 ".repeat(700)),
    ]);
    store.getBlobs = async (refs) => {
      const found = await getBlobs(refs);
      for (const ref of lost) found.delete(ref);
      return found;
    };
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 600,
      blob: { ref: [...lost][0], problem: "missing" },
    });
    // A store without getBlobs is read blob by blob; what it gives must hash to its ref.
    const withoutBatches = store as { getBlobs?: unknown };
    withoutBatches.getBlobs = undefined;
    const getBlob = store.getBlob.bind(store);
    store.getBlob = async (ref) =>
      lost.has(ref) ? new TextEncoder().encode("something else") : getBlob(ref);
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 600,
      blob: { ref: [...lost][0], problem: "corrupt" },
    });
  });
});

describe("verifyRun stopped by its signal", () => {
  const address = { sessionId: "s", runId: "r" };

  /** A closed run of `length` events (pages of 2,000 are read). */
  async function longRun(store: EventStore, length: number): Promise<void> {
    const actor = { type: "agent", id: "a" } as const;
    for (let seq = 0; seq < length; seq += 1000)
      await store.append({
        ...address,
        expectedSeq: seq,
        events: Array.from(
          { length: Math.min(1000, length - seq) },
          (_, index): NewEvent =>
            seq + index === 0
              ? { type: "run.started", actor, payload: {} }
              : seq + index === length - 1
                ? { type: "run.completed", actor, payload: { output: null } }
                : { type: "x.note", payload: { index: seq + index } },
        ),
      });
  }

  it("stops between pages once aborted: never ok, and counts only the events it checked", async () => {
    const store = new MemoryEventStore();
    await longRun(store, 4500);
    const controller = new AbortController();
    const readRun = store.readRun.bind(store);
    store.readRun = async (request) => {
      const page = await readRun(request);
      controller.abort();
      return page;
    };
    expect(await verifyRun(store, address, { signal: controller.signal })).toEqual({
      ok: false,
      length: 2000,
      stopped: true,
    });
    expect(await verifyRun(store, address, { signal: controller.signal })).toEqual({
      ok: false,
      length: 0,
      stopped: true,
    });
    // A signal never aborted changes nothing.
    expect(await verifyRun(store, address, { signal: new AbortController().signal })).toEqual({
      ok: true,
      length: 4500,
    });
    for (const options of [null, { signal: true }, { signal: controller }])
      await expect(
        verifyRun(store, address, options as unknown as VerifyRunOptions),
      ).rejects.toMatchObject({
        code: "invalid-argument",
      });
  });

  it("sees an abort from a timer or a signal handler on SQLite, whose reads never give the event loop a turn", async () => {
    const store = new SqliteEventStore({ path: join(dir, "stopped.db") });
    await store.init();
    await longRun(store, 6000);
    const controller = new AbortController();
    const verifying = verifyRun(store, address, { signal: controller.signal });
    // What a Ctrl-C does: the handler that aborts runs on a later turn of the event loop.
    setImmediate(() => controller.abort());
    expect(await verifying).toEqual({ ok: false, length: 2000, stopped: true });
    await store.close();
  });
});
