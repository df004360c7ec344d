import { join } from "node:path";
import { fileCheckProcesses, makeSlowToCheck, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEndedRun, fastLedger, startToFile } from "../interrupt-fixture.test.data.js";

const scratch = scratchDirectory("cli-verify-file-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");

beforeAll(async () => {
  const { store, close } = await fastLedger(ledger);
  await appendEndedRun(store, "s", "a");
  await close();
  // SQLite's check of the file then takes about 7 s here, as on a ledger of gigabytes.
  await makeSlowToCheck(ledger, 2000);
});

/**
 * An on-call verifying a session of a multi-gigabyte ledger presses Ctrl-C once its runs are
 * checked, while SQLite checks the file: one statement, which ran on the command's own thread
 * to its end (minutes) before the signal was seen.
 */
describe("agent-ledger verify, interrupted during SQLite's check of the file", () => {
  it("exits 130 at once, saying so, with no verdict and no check left running", async () => {
    const { child, exited, output, errors } = await startToFile(
      ["verify", "s", "--store", `sqlite:${ledger}`],
      join(scratch, "verify.txt"),
      // The runs are checked and the file's check has begun.
      async () => fileCheckProcesses(ledger).length > 0,
    );
    const pressed = Date.now();
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(Date.now() - pressed).toBeLessThan(2000);
    expect(errors()).toBe(
      "agent-ledger: verify interrupted after checking 1 of 1 run(s) of session s, during SQLite's check of the file: the session's result is not known\n",
    );
    expect(output()).toBe("ok        run a  2 events\n");
    expect(fileCheckProcesses(ledger)).toEqual([]);
  }, 60_000);
});
