import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin, runPasted } from "./session-fixture.test.data.js";

// The commands an error's hint names run as printed when pasted into a shell: ids quoted and
// after `--` (an id may start with "-"), and the store the command was given.

/** The `agent-ledger ...` command in `stderr`'s hint line. */
function hinted(stderr: string): string {
  const command = /agent-ledger (?!:).*$/m.exec(stderr)?.[0];
  expect(command, stderr).toBeDefined();
  return command as string;
}

describe("the commands agent-ledger's hints print", () => {
  const file = join(scratchDirectory("agent-ledger-hints-", { beforeAll, afterAll }), "ledger.db");
  const store = `sqlite:${file}`;
  // Quotes, a command substitution and a leading "-": pasted raw, each would misfire.
  const sessionId = "-it's $(touch pwned) a session";

  beforeAll(async () => {
    const ledger = await openStore(store);
    const recorder = new SessionRecorder({
      store: ledger,
      sessionId,
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await ledger.close();
  });

  it("resolve's unknown attempt names an inspect command that runs", async () => {
    const result = await runBin([
      "resolve",
      "--abandon",
      "checked",
      "--store",
      store,
      "--",
      sessionId,
      "nosuch",
    ]);
    expect(result.code).toBe(3);
    const command = hinted(result.stderr);
    expect(command).toContain("--store");
    const pasted = await runPasted(command);
    expect(pasted.stderr).toBe("");
    expect(pasted.code).toBe(0);
    expect(pasted.stdout).toContain("RUNNING");
  });

  it("an unknown session names a sessions command on the same store", async () => {
    const result = await runBin(["inspect", "--store", store, "--", "nosuch"]);
    expect(result.code).toBe(3);
    const pasted = await runPasted(hinted(result.stderr));
    expect(pasted.code).toBe(0);
    expect(pasted.stdout).toContain("touch pwned");
  });

  it("delete's hints lead, pasted one after the other, to the session deleted", async () => {
    const withoutYes = await runBin(["delete", "--store", store, "--", sessionId]);
    expect(withoutYes.code).toBe(2);
    const openRun = await runPasted(hinted(withoutYes.stderr));
    expect(openRun.code, openRun.stderr).toBe(1);
    expect(openRun.stderr).toContain("nothing was deleted");
    const deleted = await runPasted(hinted(openRun.stderr));
    expect(deleted.code, deleted.stderr).toBe(0);
    expect((await runBin(["sessions", "--store", store, "--json"])).stdout.trim()).toBe("[]");
  });
});
