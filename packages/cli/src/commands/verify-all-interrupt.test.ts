import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ledgerOfSessions,
  nthSession,
  startToFile,
  tamperWithEvent,
} from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-verify-all-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
/** A second or more to verify them all. */
const SESSIONS = 3000;

const id = nthSession;

beforeAll(async () => {
  await ledgerOfSessions(ledger, SESSIONS);
  // The second session's run fails verification: its first event edited.
  tamperWithEvent(ledger, { sessionId: id(1), runId: "r", seq: 0 });
}, 60_000);

/**
 * `agent-ledger verify --all > report.txt` on a ledger of many sessions, and Ctrl-C: on SQLite
 * with stdout to a file only the turns it takes between sessions and pages let it be seen.
 */
describe("agent-ledger verify --all, interrupted", () => {
  it("stops between sessions at Ctrl-C with exit 130, saying how far it got and what fails; no verdict", async () => {
    const { child, exited, output, errors } = await startToFile(
      ["verify", "--all", "--store", `sqlite:${ledger}`],
      join(scratch, "verify.txt"),
      /^ok {6}session s-00000 .*\nFAILED {2}session s-00001\n.*\n(?:ok .*\n){3}/,
    );
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    const said =
      /^agent-ledger: verify interrupted after checking (\d+) session\(s\) \((\d+) run\(s\)\)(?: and 0 of 1 run\(s\) of session s-\d{5})?: 1 run\(s\) in 1 session\(s\) fail verification \(above\); the other sessions were not checked\n$/.exec(
        errors(),
      );
    expect(said, errors()).not.toBeNull();
    const checked = Number(said?.[1]);
    expect(Number(said?.[2])).toBe(checked);
    expect(checked).toBeLessThan(SESSIONS);
    // A line for each session checked, in order, and no verdict on the ledger.
    const lines = output().trimEnd().split("\n");
    expect(lines.splice(1, 2)).toEqual([
      `FAILED  session ${id(1)}`,
      "  TAMPERED  run r  bad seq 0: content does not match its hash",
    ]);
    expect(lines).toEqual(
      Array.from({ length: checked }, (_, index) => index)
        .filter((index) => index !== 1)
        .map((index) => `ok      session ${id(index)}  1 run(s)`),
    );
  }, 60_000);
});
