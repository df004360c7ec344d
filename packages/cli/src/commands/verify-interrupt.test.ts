import { join } from "node:path";
import type { NewEvent } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEndedRun, fastLedger, startToFile } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-verify-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
/** Run b's length: a second or more to verify, pages of 2,000 events. */
const LONG = 80_000;

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  const actor = { type: "agent", id: "a" } as const;
  // Run a, checked (and its line printed) first; then run b, long.
  await appendEndedRun(store, "s", "a");
  for (let seq = 0; seq < LONG; seq += 1000)
    await store.append({
      sessionId: "s",
      runId: "b",
      expectedSeq: seq,
      events: Array.from(
        { length: 1000 },
        (_, index): NewEvent =>
          seq + index === 0
            ? { type: "run.started", actor, payload: {} }
            : { type: "x.note", payload: { note: `note ${seq + index}` } },
      ),
    });
  await close();
}, 60_000);

/**
 * An on-call verifying a session of a million events presses Ctrl-C. On SQLite with stdout
 * redirected to a file, neither the reads nor the writes give the event loop a turn: a verify
 * that never took one saw the signal only once it had read every page, and printed its verdict.
 */
describe("agent-ledger verify, interrupted", () => {
  it("stops between pages of a run at Ctrl-C with exit 130, saying how far it got, and prints no verdict", async () => {
    const { child, exited, output, errors } = await startToFile(
      ["verify", "s", "--store", `sqlite:${ledger}`],
      join(scratch, "verify.txt"),
      /^ok {8}run a {2}2 events\n/m,
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const said =
      /^agent-ledger: verify interrupted after checking 1 of 2 run\(s\) of session s(?: and the first (\d+) event\(s\) of run b)?: the session's result is not known\n$/.exec(
        errors(),
      );
    expect(said, errors()).not.toBeNull();
    // Stopped between pages of run b (of 2,000 events), before its end.
    const checked = Number(said?.[1] ?? 0);
    expect(checked % 2000).toBe(0);
    expect(checked).toBeLessThan(LONG);
    // Run a's line stays; nothing of run b, and no verdict on the session.
    expect(output()).toBe("ok        run a  2 events\n");
  }, 60_000);
});
