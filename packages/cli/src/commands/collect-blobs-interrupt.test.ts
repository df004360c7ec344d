import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastLedger, interruptBlobSweep, putOrphanBlobs } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-collect-blobs-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
/** A hundred pages of 500 blobs, a second or so to sweep. */
const BLOBS = 50_000;
let refs: string[] = [];

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  // Blobs no session references: every one is for collect-blobs --blob-grace 0 to delete.
  refs = await putOrphanBlobs(store, BLOBS);
  await close();
}, 60_000);

/**
 * `agent-ledger collect-blobs` on a store of millions of blobs, and Ctrl-C: the sweep ran to its
 * end (core's collectBlobs had no way to stop, and on SQLite its pages never gave the event
 * loop a turn). It stops between pages now, and what it says it deleted is what is gone.
 */
describe("agent-ledger collect-blobs, interrupted", () => {
  it("stops between pages at Ctrl-C with exit 130, and says exactly how many blobs it deleted", async () => {
    const output = await interruptBlobSweep(
      ledger,
      ["collect-blobs", "--blob-grace", "0", "--store", `sqlite:${ledger}`],
      join(scratch, "collect.txt"),
      refs,
      /^agent-ledger: collect-blobs interrupted after deleting (\d+) blob\(s\) that no existing session references; the blobs it had not looked at yet are kept\n$/,
    );
    expect(output).toBe("");
  }, 60_000);
});
