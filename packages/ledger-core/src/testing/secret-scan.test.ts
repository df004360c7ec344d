import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "./scratch-directory.js";
import { base64Forms, scanSqliteForSecret } from "./secret-scan.js";

const dir = scratchDirectory("agent-ledger-secret-scan-", { beforeAll, afterAll });
const secret = "sk-live-4f9a8b7c6d5e";

describe("scanSqliteForSecret", () => {
  it("finds a secret kept as base64 in a payload, wherever its bytes start", async () => {
    for (const before of ["", "a", "ab", "abc"])
      for (const after of ["", "z", "yz"]) {
        const text = Buffer.from(`${before}${secret}${after}`).toString("base64");
        expect(base64Forms(secret).some((form) => text.includes(form))).toBe(true);
      }
    const path = join(dir, "base64.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const actor = { type: "agent", id: "a" } as const;
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun({ base64: Buffer.from(`{"key":"${secret}"}`).toString("base64") });
    await store.close();
    expect(await scanSqliteForSecret(path, secret)).toEqual([{ where: "events[0].body" }]);
    expect(await scanSqliteForSecret(path, "sk-live-000000000000")).toEqual([]);
  });
});
