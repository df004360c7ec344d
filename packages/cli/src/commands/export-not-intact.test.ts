import { join } from "node:path";
import { MemoryEventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import { interleavedStore, scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordGapSession, runBin } from "../session-fixture.test.data.js";
import { textOutput as text } from "../text-output.test.data.js";
import type { CommandContext } from "./context.js";
import { exportCommand } from "./export.js";

const actor = { type: "agent", id: "a" } as const;

describe("agent-ledger export of runs that are not intact", () => {
  const directory = scratchDirectory("agent-ledger-export-gaps-", { beforeAll, afterAll });
  const path = join(directory, "ledger.db");
  const cli = (...args: string[]) => runBin(["--store", `sqlite:${path}`, ...args]);
  const verify = `run agent-ledger verify --store sqlite:${path} gap`;

  // Session "gap" (recordGapSession): run "main" paid with a tool call and completed, its seq 2
  // (the payment's outcome) deleted; then run "second" completed, its last event (seq 1)
  // deleted: only the store's head of the run still counts it.
  beforeAll(async () => {
    await recordGapSession(path);
    const store = await openStore(`sqlite:${path}`);
    const second = new SessionRecorder({ store, sessionId: "gap", runId: "second", actor });
    await second.startRun();
    await second.completeRun("done");
    await store.close();
    const database = new Database(path);
    const remove = database.prepare("DELETE FROM events WHERE run_id = ? AND seq = ?");
    const deleted = remove.run("second", 1).changes;
    database.close();
    expect(deleted).toBe(1);
  });

  it("warns of a seq missing in the middle and of a run's last event, as inspect does, in every format", async () => {
    const warnings = [
      `agent-ledger: warning: run main is not intact (seq 2 is missing): ${verify}`,
      `agent-ledger: warning: run second is not intact (seq 1 is missing): ${verify}`,
      "",
    ].join("\n");
    const inspected = await cli("inspect", "gap", "--json");
    expect(inspected.stderr).toBe(warnings);
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const result = await cli("export", "gap", "--format", format);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr, format).toBe(warnings);
      expect(result.stdout.length, format).toBeGreaterThan(0);
    }
    // Exported as it reads: main's 3 events left of 4, second's 1 of 2.
    const jsonl = await cli("export", "gap");
    const events = jsonl.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.map(({ runId, seq }) => `${runId}:${seq}`)).toEqual([
      "main:0",
      "main:1",
      "main:3",
      "second:0",
    ]);
  });
});

describe("agent-ledger export's check that the runs are intact", () => {
  it("reads each page of the session once, in every format", async () => {
    const ledger = new MemoryEventStore();
    await ledger.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", actor, payload: {} }],
    });
    // 2,500 events: three pages of the export's 1,000.
    for (let seq = 1; seq < 2500; seq += 100)
      await ledger.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: seq,
        events: Array.from({ length: 100 }, (_, index) => ({
          type: "x.note",
          actor,
          payload: { seq: seq + index },
        })),
      });
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const pages: string[] = [];
      const store = interleavedStore(ledger, async (method, args) => {
        if (method !== "readSession") return;
        const { after = 0, limit } = args[0] as { after?: number; limit?: number };
        pages.push(`${after}+${limit}`);
      });
      const stdout = text();
      const stderr = text();
      const context: CommandContext = {
        args: ["s", "--format", format],
        io: { stdout, stderr, env: {} },
        storeUrl: "memory:",
        storeSource: "flag",
        openStore: async () => store,
      };
      expect(await exportCommand(context), stderr.text).toBe(0);
      expect(stderr.text, format).toBe("");
      // The session's pages; a read of one event (does it exist, was it deleted meanwhile) aside.
      const afters = pages.filter((page) => !page.endsWith("+1")).map((page) => page.split("+")[0]);
      // Before, a whole inspectSession read every page first, holding the run tree.
      expect(afters, `${format}: ${pages.join(", ")}`).toEqual([...new Set(afters)]);
      expect(stdout.text.length, format).toBeGreaterThan(0);
    }
  });
});
