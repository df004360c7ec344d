import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionRunIds } from "./session-run-ids.js";

const directory = scratchDirectory("agent-ledger-run-ids-", { beforeAll, afterAll });

/** A SQLite ledger whose session `s` commits one event per run id, in this order. */
async function ledger(name: string, runs: string[]): Promise<string> {
  const path = join(directory, `${name}.db`);
  const store = await openStore(`sqlite:${path}`);
  const lengths = new Map<string, number>();
  for (const runId of runs) {
    const expectedSeq = lengths.get(runId) ?? 0;
    const type = expectedSeq === 0 ? "run.started" : "checkpoint.saved";
    await store.append({ sessionId: "s", runId, expectedSeq, events: [{ type }] });
    lengths.set(runId, expectedSeq + 1);
  }
  await store.close();
  return path;
}

/** Makes the events at these commit cursors bytes that no longer decode (an edit by hand). */
function spoil(path: string, cursors: number[]): void {
  const database = new Database(path);
  try {
    const edit = database.prepare("UPDATE events SET body = ? WHERE commit_cursor = ?");
    for (const cursor of cursors)
      expect(edit.run(Buffer.from([0x07, 0x00]), cursor).changes).toBe(1);
  } finally {
    database.close();
  }
}

async function runIdsOf(path: string, pageSize?: number): Promise<string[]> {
  const store = await openStore(`sqlite:${path}`);
  try {
    return await sessionRunIds(store, "s", pageSize === undefined ? {} : { pageSize });
  } finally {
    await store.close();
  }
}

describe("sessionRunIds", () => {
  it("names each run once, in the order its first event was committed", async () => {
    const path = await ledger("clean", ["b", "a", "b", "c", "a", "c"]);
    expect(await runIdsOf(path)).toEqual(["b", "a", "c"]);
    expect(await runIdsOf(path, 2)).toEqual(["b", "a", "c"]);
  });

  // readSession decodes every body it returns: one that no longer decodes failed the whole
  // page, and with it the listing. Stepped over, the pages around it still count.
  it("steps over events that cannot be read: first, in a row, at a page's edge", async () => {
    const runs = ["a", "b", "a", "c", "b", "d", "c", "a", "e", "e", "f"];
    const path = await ledger("spoiled", runs);
    spoil(path, [1, 4, 5, 6, 9, 11]);
    // a: 1 spoiled, 3 and 8 read. c: 4 spoiled, 7 read. d: only 6, spoiled. f: only 11, spoiled.
    for (const pageSize of [undefined, 1, 2, 3, 4, 5])
      expect(await runIdsOf(path, pageSize), `page size ${pageSize}`).toEqual(["b", "a", "c", "e"]);
  });

  it("is empty for a session without events", async () => {
    const path = await ledger("empty", ["a"]);
    const store = await openStore(`sqlite:${path}`);
    try {
      expect(await sessionRunIds(store, "no-such-session")).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
