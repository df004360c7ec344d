import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastLedger, nthSession } from "../interrupt-fixture.test.data.js";
import { actor, diedInFlight, finished, idle } from "../open-work.test.data.js";
import { runCli } from "../run-cli.js";
import { pausedInsideAgentCall, runBin } from "../session-fixture.test.data.js";

describe("agent-ledger sessions --unresolved", () => {
  const scratch = scratchDirectory("agent-ledger-sessions-unresolved-", { beforeAll, afterAll });
  const storeUrl = `sqlite:${join(scratch, "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, "sessions", ...args]);

  beforeAll(async () => {
    const store = await openStore(storeUrl);
    await finished(store, "a-finished");
    await diedInFlight(store, "b-crashed", 1);
    await idle(store, "c-idle");
    await pausedInsideAgentCall(store, "d-paused");
    await diedInFlight(store, "e-crashed-twice", 2);
    await finished(store, "f-finished");
    await store.close();
  });

  it("lists only the sessions with something open, with inspect's counts", async () => {
    const result = await cli("--unresolved");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION {10}EVENTS {2}CREATED {19}UPDATED {19}OPEN$/);
    const time = "\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z";
    const row = (id: string, events: number, open: string) =>
      new RegExp(`^${id.padEnd(15)}  ${String(events).padStart(6)}  ${time}  ${time}  ${open}$`);
    expect(lines.slice(1, -1)).toHaveLength(4);
    expect(lines[1]).toMatch(row("b-crashed", 2, "1 unresolved"));
    expect(lines[2]).toMatch(row("c-idle", 1, "1 open run"));
    // The agent call its pause keeps open is not counted as unresolved, as inspect says it.
    expect(lines[3]).toMatch(row("d-paused", 6, "1 paused"));
    expect(lines[4]).toMatch(row("e-crashed-twice", 3, "2 unresolved"));
    expect(lines.at(-1)).toBe("agent-ledger inspect <session> says what to do about each");

    // The counts are the ones inspect's first line gives for each.
    for (const [sessionId, unresolved] of [
      ["b-crashed", 1],
      ["d-paused", 0],
      ["e-crashed-twice", 2],
    ] as const) {
      const inspect = await runBin(["--store", storeUrl, "inspect", sessionId]);
      expect(inspect.stdout.split("\n")[0]).toContain(`  ${unresolved} unresolved`);
    }
  });

  it("--json: each session's summary with the three counts", async () => {
    const result = await cli("--unresolved", "--json");
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as Record<string, unknown>[];
    expect(listed.map(({ createdAt, updatedAt, ...rest }) => rest)).toEqual([
      { sessionId: "b-crashed", eventCount: 2, unresolved: 1, paused: 0, openRuns: 0 },
      { sessionId: "c-idle", eventCount: 1, unresolved: 0, paused: 0, openRuns: 1 },
      { sessionId: "d-paused", eventCount: 6, unresolved: 0, paused: 1, openRuns: 0 },
      { sessionId: "e-crashed-twice", eventCount: 3, unresolved: 2, paused: 0, openRuns: 0 },
    ]);
  });

  it("--limit counts the sessions it lists, not those it read", async () => {
    const text = await cli("--unresolved", "--limit", "2");
    expect(text.stdout.split("\n").map((line) => line.split(" ")[0])).toEqual([
      "SESSION",
      "b-crashed",
      "c-idle",
      "agent-ledger",
      "",
    ]);
    const json = await cli("--unresolved", "--limit", "3", "--json");
    expect((JSON.parse(json.stdout) as { sessionId: string }[]).map((s) => s.sessionId)).toEqual([
      "b-crashed",
      "c-idle",
      "d-paused",
    ]);
  });

  it("without it, every session is listed as before, with no counts", async () => {
    const result = await cli();
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION {10}EVENTS {2}CREATED {19}UPDATED$/);
    expect(lines.slice(1).map((line) => line.split(" ")[0])).toEqual([
      "a-finished",
      "b-crashed",
      "c-idle",
      "d-paused",
      "e-crashed-twice",
      "f-finished",
    ]);
    expect(JSON.parse((await cli("--json")).stdout)[0]).not.toHaveProperty("unresolved");
  });

  it("says so when no session has anything open", async () => {
    const url = `sqlite:${join(scratch, "quiet.db")}`;
    const store = await openStore(url);
    await finished(store, "only");
    await store.close();
    const result = await runBin(["--store", url, "sessions", "--unresolved"]);
    expect(result).toMatchObject({
      code: 0,
      stderr: "",
      stdout: "no session has an unresolved attempt, a paused run or a run open\n",
    });
    expect(
      JSON.parse((await runBin(["--store", url, "sessions", "--unresolved", "--json"])).stdout),
    ).toEqual([]);
  });
});

describe("agent-ledger sessions --unresolved, interrupted", () => {
  const scratch = scratchDirectory("agent-ledger-sessions-unresolved-stop-", {
    beforeAll,
    afterAll,
  });
  const path = join(scratch, "open.db");
  const storeUrl = `sqlite:${path}`;

  /** `sessions --unresolved ...args` in this process, Ctrl-C'd by `stopAt` (given the signal's controller). */
  async function stopped(
    args: string[],
    stopAt: (controller: AbortController) => void,
    onWrite = false,
  ) {
    const controller = new AbortController();
    stopAt(controller);
    const stdout: string[] = [];
    const stderr: string[] = [];
    const code = await runCli(["--store", storeUrl, "sessions", "--unresolved", ...args], {
      stdout: {
        write: (chunk: string) => {
          stdout.push(chunk);
          if (onWrite) controller.abort();
          return true;
        },
      },
      stderr: { write: (chunk: string) => stderr.push(chunk) > 0 },
      env: { AGENT_LEDGER_STORE: "" },
      signal: controller.signal,
    });
    return { code, stdout: stdout.join(""), stderr: stderr.join("") };
  }

  beforeAll(async () => {
    // Two pages of the store's list (500 each), every session a run left open.
    const { store, close } = await fastLedger(path);
    for (let index = 0; index < 1000; index += 100)
      await Promise.all(
        Array.from({ length: 100 }, (_, offset) =>
          store.append({
            sessionId: nthSession(index + offset),
            runId: "r",
            expectedSeq: 0,
            events: [{ type: "run.started", actor, payload: {} }],
          }),
        ),
      );
    await close();
  }, 60_000);

  it("stops between pages at Ctrl-C with exit 130; what was printed stays", async () => {
    const result = await stopped([], () => {}, true);
    expect(result.code).toBe(130);
    expect(result.stderr).toBe("agent-ledger: sessions interrupted after listing 500 session(s)\n");
    const rows = result.stdout.trimEnd().split("\n").slice(1);
    expect(rows.map((row) => row.split(" ")[0])).toEqual(
      Array.from({ length: 500 }, (_, index) => nthSession(index)),
    );
    expect(rows.every((row) => row.endsWith("  1 open run"))).toBe(true);
  });

  it("stops between two sessions of a page, before reading the next", async () => {
    const text = await stopped([], (controller) => controller.abort());
    expect(text).toEqual({
      code: 130,
      stdout: "",
      stderr: "agent-ledger: sessions interrupted after listing 0 session(s)\n",
    });
    const json = await stopped(["--json"], (controller) => controller.abort());
    expect(json).toEqual({
      code: 130,
      stdout: "",
      stderr:
        "agent-ledger: sessions interrupted after finding 0 session(s) with something open; nothing printed (--json prints the list once all are read)\n",
    });
  });
});
