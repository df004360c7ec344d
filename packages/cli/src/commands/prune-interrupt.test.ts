import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBin } from "../session-fixture.test.data.js";

const scratch = scratchDirectory("cli-prune-interrupt-", afterAll);
const ledger = join(scratch, "ledger.db");
const SESSIONS = 3000;
let cutoff = "";

beforeAll(async () => {
  const store = new SqliteEventStore({ path: ledger });
  await store.init();
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
  await store.close();
  await sleep(20);
  cutoff = new Date().toISOString();
}, 120_000);

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
