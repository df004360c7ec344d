import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin } from "../session-fixture.test.data.js";

describe("agent-ledger sessions --limit", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-sessions-", { beforeAll, afterAll }), "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    for (const sessionId of ["one", "two", "three"])
      await new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } }).startRun();
    await store.close();
  });

  it("shows at most n sessions", async () => {
    const result = await cli("sessions", "--limit", "2", "--json");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveLength(2);
  });

  it("refuses a limit that is not a positive integer instead of printing 'no sessions'", async () => {
    for (const limit of ["abc", "0", "1.5", ""]) {
      const result = await cli("sessions", `--limit=${limit}`);
      expect(result.code, limit).toBe(2);
      expect(result.stderr, limit).toContain("--limit must be an integer >= 1");
      expect(result.stdout, limit).not.toContain("no sessions");
    }
  });
});
