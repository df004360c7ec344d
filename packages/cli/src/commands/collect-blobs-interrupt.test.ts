import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastLedger, startToFile } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-collect-blobs-interrupt-", afterAll);
const ledger = join(scratch, "ledger.db");
/** A hundred pages of 500 blobs, a second or so to sweep. */
const BLOBS = 50_000;
let refs: string[] = [];

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  // Blobs no session references: every one is for collect-blobs --blob-grace 0 to delete.
  for (let index = 0; index < BLOBS; index += 1000)
    refs.push(
      ...(await store.putBlobs(
        Array.from({ length: 1000 }, (_, offset) => `orphan ${index + offset}`),
      )),
    );
  // The sweep goes in the order of the refs' digests, the refs' own order.
  refs = refs.sort();
  await close();
}, 60_000);

/** Which of `refs` the store holds (read beside the command, as a second process would). */
async function stored(store: SqliteEventStore, some: string[]): Promise<string[]> {
  const found = new Set<string>();
  for (let index = 0; index < some.length; index += 1000)
    for (const ref of (await store.getBlobs(some.slice(index, index + 1000))).keys())
      found.add(ref);
  return some.filter((ref) => found.has(ref));
}

/**
 * `agent-ledger collect-blobs` on a store of millions of blobs, and Ctrl-C: the sweep ran to its
 * end (core's collectBlobs had no way to stop, and on SQLite its pages never gave the event
 * loop a turn). It stops between pages now, and what it says it deleted is what is gone.
 */
describe("agent-ledger collect-blobs, interrupted", () => {
  it("stops between pages at Ctrl-C with exit 130, and says exactly how many blobs it deleted", async () => {
    const reader = new SqliteEventStore({ path: ledger });
    await reader.init({ create: false, upgrade: false });
    try {
      const { child, exited, output, errors } = await startToFile(
        ["collect-blobs", "--blob-grace", "0", "--store", `sqlite:${ledger}`],
        join(scratch, "collect.txt"),
        // Running: its first page (the first refs by digest) is gone.
        async () => (await stored(reader, refs.slice(0, 1))).length === 0,
      );
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      const said =
        /^agent-ledger: collect-blobs interrupted after deleting (\d+) blob\(s\) that no existing session references; the blobs it had not looked at yet are kept\n$/.exec(
          errors(),
        );
      expect(said, errors()).not.toBeNull();
      expect(output()).toBe("");
      const deleted = Number(said?.[1]);
      // The store holds exactly what it did not say it deleted: the refs after the pages done.
      expect(deleted).toBeGreaterThan(0);
      expect(deleted).toBeLessThan(BLOBS);
      expect(await stored(reader, refs)).toEqual(refs.slice(deleted));
    } finally {
      await reader.close();
    }
  }, 60_000);
});
