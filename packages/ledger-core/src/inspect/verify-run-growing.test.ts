import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { decodeBody, encodeBody } from "../stores/sqlite/body-codec.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { interleavedStore } from "../testing/interleaved-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { verifyRun } from "./verify-run.js";

const dir = scratchDirectory("agent-ledger-verify-", { beforeAll, afterAll });

describe("verifyRun of a run its agent appends to while it is verified", () => {
  /**
   * A SQLite store on `path` whose first `runHead` lets `grow` append through another
   * connection first: the agent's appends land after verify read the run's last page.
   */
  async function growingStore(path: string, grow: (writer: EventStore) => Promise<void>) {
    const reader = new SqliteEventStore({ path });
    const writer = new SqliteEventStore({ path });
    await reader.init();
    await writer.init();
    let grown = false;
    const store = interleavedStore(reader, async (method) => {
      if (method !== "runHead" || grown) return;
      grown = true;
      await grow(writer);
    });
    return {
      store,
      async close() {
        expect(grown, "the run grew").toBe(true);
        await reader.close();
        await writer.close();
      },
    };
  }

  const actor = { type: "agent", id: "a" } as const;
  const note = (index: number): NewEvent => ({ type: "x.note", actor, payload: { index } });

  async function openRun(path: string): Promise<void> {
    const store = new SqliteEventStore({ path });
    await store.init();
    await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", actor, payload: {} }, note(1), note(2)],
    });
    await store.close();
  }

  it("an event appended after the last page was read is verified too: ok, never a head mismatch", async () => {
    const path = join(dir, "grows-by-one.db");
    await openRun(path);
    const { store, close } = await growingStore(path, async (writer) => {
      await writer.append({ sessionId: "s", runId: "r", expectedSeq: 3, events: [note(3)] });
    });
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({ ok: true, length: 4 });
    await close();
  });

  it("a run that grew by pages and closed meanwhile is read on to its end", async () => {
    const path = join(dir, "grows-and-closes.db");
    await openRun(path);
    const { store, close } = await growingStore(path, async (writer) => {
      const events = Array.from({ length: 4500 }, (_, index) => note(index + 3));
      events.push({ type: "run.completed", actor, payload: { output: null } });
      await writer.append({ sessionId: "s", runId: "r", expectedSeq: 3, events });
    });
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({
      ok: true,
      length: 4504,
    });
    await close();
  });

  it("an edit among the events appended meanwhile is still found at its seq", async () => {
    const path = join(dir, "grows-edited.db");
    await openRun(path);
    const { store, close } = await growingStore(path, async (writer) => {
      await writer.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 3,
        events: [note(3), note(4), { type: "run.completed", actor, payload: { output: null } }],
      });
      const raw = new Database(path);
      const row = raw.prepare("SELECT body FROM events WHERE run_id = 'r' AND seq = 4").get() as {
        body: string | Buffer;
      };
      const edited = encodeBody(decodeBody(row.body).replace('"index":4', '"index":5'));
      raw.prepare("UPDATE events SET body = ? WHERE run_id = 'r' AND seq = 4").run(edited);
      raw.close();
    });
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 4,
    });
    await close();
  });
});
