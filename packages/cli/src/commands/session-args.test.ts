import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession, runBin } from "../session-fixture.test.data.js";

// An id is 1-255 characters without control characters (§6): anything else on the command line
// is bad usage (exit 2), like an unknown option, not a failed command (exit 1).
describe("agent-ledger with an id that cannot be an id", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-ids-", afterAll), "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);
  let attemptId = "";

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    attemptId = (await recordDemoSession(store, "ids")).unresolvedAttemptId;
    await store.close();
  });

  it("exits 2 and names the argument", async () => {
    const bad = "line\nbreak";
    const long = "x".repeat(256);
    for (const args of [
      ["inspect", bad],
      ["verify", long],
      ["tail", bad],
      ["export", long, "--format", "atif"],
      ["resolve", bad, attemptId, "--abandon", "r"],
      ["resolve", "ids", long, "--abandon", "r"],
      ["resolve", "ids", attemptId, "--abandon", "r", "--actor", bad],
      ["resolve", "ids", attemptId, "--abandon", "r", "--run", long],
    ]) {
      const result = await cli(...args);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toMatch(/is not a valid id: 1-255 characters/);
    }
    const inspection = JSON.parse((await cli("inspect", "ids", "--json")).stdout);
    expect(inspection.unresolved).toHaveLength(1);
  });
});
