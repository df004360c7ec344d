import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastLedger, startToFile } from "../interrupt-fixture.test.data.js";
import { startBin } from "../session-fixture.test.data.js";

const scratch = scratchDirectory("cli-prune-interrupt-", afterAll);
const ledger = join(scratch, "ledger.db");
const SESSIONS = 3000;
let cutoff = "";

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  const actor = { type: "agent", id: "a" } as const;
  for (let index = 0; index < SESSIONS; index++)
    await store.append({
      sessionId: `old-${String(index).padStart(5, "0")}`,
      runId: "r",
      expectedSeq: 0,
      events: [
        { type: "run.started", actor, payload: {} },
        { type: "run.completed", actor, payload: { output: null } },
      ],
    });
  await close();
  await sleep(20);
  cutoff = new Date().toISOString();
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
    const actor = { type: "agent", id: "a" } as const;
    await store.append({
      sessionId: "old",
      runId: "r",
      expectedSeq: 0,
      events: [
        { type: "run.started", actor, payload: {} },
        { type: "run.completed", actor, payload: { output: null } },
      ],
    });
    for (let index = 0; index < BLOBS; index += 1000)
      refs.push(
        ...(await store.putBlobs(
          Array.from({ length: 1000 }, (_, offset) => `orphan ${index + offset}`),
        )),
      );
    // The sweep goes in the order of the refs' digests, the refs' own order.
    refs = refs.sort();
    await close();
    await sleep(20);
    before = new Date().toISOString();
  }, 60_000);

  it("stops between pages of blobs with exit 130, saying how many it deleted: exactly those are gone", async () => {
    const reader = new SqliteEventStore({ path: blobLedger });
    await reader.init({ create: false, upgrade: false });
    const held = async (some: string[]) => {
      const found = new Set<string>();
      for (let index = 0; index < some.length; index += 1000)
        for (const ref of (await reader.getBlobs(some.slice(index, index + 1000))).keys())
          found.add(ref);
      return some.filter((ref) => found.has(ref));
    };
    try {
      const { child, exited, output, errors } = await startToFile(
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
        // The session is deleted, and the sweep's first page (the first refs) is gone.
        async () => (await held(refs.slice(0, 1))).length === 0,
      );
      child.kill("SIGINT");
      expect(await exited).toBe(130);
      expect(output()).toBe("deleted old  2 events\n");
      const said =
        /^agent-ledger: prune interrupted after deleting 1 of 1 session\(s\), then (\d+) blob\(s\) no existing session references while collecting them; nothing more was deleted\n$/.exec(
          errors(),
        );
      expect(said, errors()).not.toBeNull();
      const deleted = Number(said?.[1]);
      expect(deleted).toBeGreaterThan(0);
      expect(deleted).toBeLessThan(BLOBS);
      expect(await held(refs)).toEqual(refs.slice(deleted));
    } finally {
      await reader.close();
    }
  }, 60_000);
});
