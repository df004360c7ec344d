import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  appendEndedRun,
  fastLedger,
  interruptBlobSweep,
  putOrphanBlobs,
  runCliInterrupted,
  startToFile,
} from "../interrupt-fixture.test.data.js";
import { recordedEarlier } from "../recorded-earlier.test.data.js";
import { startBin } from "../session-fixture.test.data.js";

const scratch = scratchDirectory("cli-prune-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
const SESSIONS = 3000;
let cutoff = "";

beforeAll(async () => {
  // Recorded 10 minutes ago, the cutoff 5: prune refuses one within the last minute.
  await recordedEarlier(10 * 60_000, async () => {
    const { store, close } = await fastLedger(ledger);
    for (let index = 0; index < SESSIONS; index++)
      await appendEndedRun(store, `old-${String(index).padStart(5, "0")}`);
    await close();
  });
  cutoff = new Date(Date.now() - 5 * 60_000).toISOString();
}, 120_000);

/**
 * An on-call lists what a prune would delete on a ledger of 160,000 sessions, and presses
 * Ctrl-C. On SQLite with stdout to a file, the listing of sessions never gave the event loop a
 * turn, and the candidates were printed only once all were found.
 */
describe("agent-ledger prune --dry-run, interrupted", () => {
  it("prints each session as it is found, stops at Ctrl-C with exit 130, and deletes nothing", async () => {
    const { child, exited, output, errors } = await startToFile(
      ["prune", "--store", `sqlite:${ledger}`, "--before", cutoff, "--dry-run"],
      join(scratch, "dry-run.txt"),
      /^would delete old-/,
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const said = new RegExp(
      `^agent-ledger: prune --dry-run interrupted after finding (\\d+) session\\(s\\) with no event since ${cutoff.replaceAll(".", "\\.")}; nothing was deleted \\(dry run\\)\n$`,
    ).exec(errors());
    expect(said, errors()).not.toBeNull();
    const found = Number(said?.[1]);
    expect(found).toBeGreaterThan(0);
    expect(found).toBeLessThan(SESSIONS);
    // Each session found was printed, in order; no summary line, and nothing deleted.
    const printed = output()
      .trimEnd()
      .split("\n")
      .map((line) => /^would delete (\S+) {2}2 events, last at /.exec(line)?.[1]);
    expect(printed).toEqual(
      Array.from({ length: found }, (_, index) => `old-${String(index).padStart(5, "0")}`),
    );
    const store = new SqliteEventStore({ path: ledger });
    await store.init();
    expect((await store.listSessions({ limit: SESSIONS })).sessions).toHaveLength(SESSIONS);
    await store.close();
  }, 120_000);
});

/**
 * An on-call who sees a wrong cutoff presses Ctrl-C: the prune stops before its next deletion.
 * On SQLite each deletion is synchronous, so a prune that never gave the event loop a turn
 * never saw the signal and deleted every candidate.
 */
describe("agent-ledger prune --yes, interrupted", () => {
  it("stops at Ctrl-C with exit 130, saying so, and deletes nothing more", async () => {
    // Started, and stopped once it has said it deleted a first session.
    const { child, output, errors } = await startBin(
      ["prune", "--store", `sqlite:${ledger}`, "--before", cutoff, "--yes"],
      /deleted old-/,
    );
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(errors()).toContain("prune interrupted after deleting");
    const store = new SqliteEventStore({ path: ledger });
    await store.init();
    const left = (await store.listSessions({ limit: SESSIONS })).sessions.length;
    await store.close();
    const said = output()
      .split("\n")
      .filter((line) => line.startsWith("deleted old-")).length;
    // What it said it deleted is what is gone; the rest is still there.
    expect(left).toBe(SESSIONS - said);
    expect(left).toBeGreaterThan(0);
  }, 120_000);
});

/**
 * A prune that has deleted its sessions then sweeps every blob of the store (collect-blobs):
 * on a store of millions of blobs the last phase is the long one, and on SQLite it never gave
 * the event loop a turn either.
 */
describe("agent-ledger prune --yes, interrupted while collecting blobs", () => {
  const blobLedger = join(scratch, "blobs.db");
  const BLOBS = 50_000;
  let refs: string[] = [];
  let before = "";

  beforeAll(async () => {
    const { store, close } = await fastLedger(blobLedger);
    await recordedEarlier(10 * 60_000, () => appendEndedRun(store, "old"));
    // Blobs no session references, in the order the sweep goes.
    refs = await putOrphanBlobs(store, BLOBS);
    await close();
    before = new Date(Date.now() - 5 * 60_000).toISOString();
  }, 60_000);

  it("--dry-run stops at Ctrl-C while counting the blobs, saying so, and deletes nothing", async () => {
    // Pressed once the session is listed: the count of the blobs, a page at a time, comes next.
    const stopped = await runCliInterrupted(
      ["prune", "--store", `sqlite:${blobLedger}`, "--before", before, "--dry-run"],
      "would delete old  2 events",
    );
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toBe(
      `agent-ledger: prune --dry-run interrupted after finding 1 session(s) with no event since ${before}, while counting the blobs that would go with them; nothing was deleted (dry run)\n`,
    );
    expect(stopped.stdout).toMatch(/^would delete old {2}2 events, last at \S+\n$/);
    const store = new SqliteEventStore({ path: blobLedger });
    await store.init();
    expect((await store.getBlobs(refs.slice(0, 1000))).size).toBe(1000);
    expect((await store.listSessions()).sessions).toHaveLength(1);
    await store.close();
  });

  it("stops between pages of blobs with exit 130, saying how many it deleted: exactly those are gone", async () => {
    const output = await interruptBlobSweep(
      blobLedger,
      [
        "prune",
        "--store",
        `sqlite:${blobLedger}`,
        "--before",
        before,
        "--yes",
        "--blob-grace",
        "0",
      ],
      join(scratch, "collecting.txt"),
      refs,
      /^agent-ledger: prune interrupted after deleting 1 of 1 session\(s\), then (\d+) blob\(s\) no existing session references while collecting them; nothing more was deleted\n$/,
    );
    // The session is deleted first.
    expect(output).toBe("deleted old  2 events\n");
  }, 60_000);
});
