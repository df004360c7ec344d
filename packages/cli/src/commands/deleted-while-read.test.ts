import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EventStore, NewEvent } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { interleavedStore, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendEndedRun, tamperWithEvent } from "../interrupt-fixture.test.data.js";
import { textOutput as text } from "../text-output.test.data.js";
import { startViewer } from "../viewer/viewer-server.js";
import type { CommandContext } from "./context.js";
import { exportCommand } from "./export.js";
import { inspectCommand } from "./inspect.js";
import { tailCommand } from "./tail.js";
import { verifyCommand } from "./verify.js";

const folder = scratchDirectory("agent-ledger-verify-deleted-", { beforeAll, afterAll });
const actor = { type: "agent", id: "a" } as const;
/** Events of b's run `long`: more than a page of verifyRun (2,000), export (1,000), inspect (5,000). */
const LONG = 5500;

/**
 * A SQLite ledger of sessions a (run r), b (run `long` of LONG events, the last naming a blob
 * put for b) and c (run r), all ended: what prune may delete while verify runs.
 */
async function ledger(name: string): Promise<string> {
  const path = join(folder, name);
  const store = new SqliteEventStore({ path });
  await store.init();
  await appendEndedRun(store, "a");
  const ref = await store.putBlob("b's evidence", { sessionId: "b" });
  const events: NewEvent[] = [{ type: "run.started", actor, payload: {} }];
  for (let seq = 1; seq < LONG - 1; seq++) events.push({ type: "x.note", actor, payload: { seq } });
  events.push({ type: "run.completed", actor, payload: { output: null }, evidenceRefs: [ref] });
  await store.append({ sessionId: "b", runId: "long", expectedSeq: 0, events });
  await appendEndedRun(store, "c");
  await store.close();
  return path;
}

/**
 * The store verify reads, on its own connection to `path`, that has session b deleted through
 * another connection (as `agent-ledger prune` in another process would) just before the call
 * `when` picks out: the deletion lands between two of verify's reads.
 */
async function deletingStore(
  path: string,
  when: (method: string, args: unknown[]) => boolean,
): Promise<{ store: EventStore; close(): Promise<void> }> {
  const reader = new SqliteEventStore({ path });
  const pruner = new SqliteEventStore({ path });
  await reader.init();
  await pruner.init();
  let deleted = false;
  const store = interleavedStore(reader, async (method, args) => {
    if (deleted || !when(method, args)) return;
    deleted = true;
    await pruner.deleteSession("b", { blobGraceMs: 0 });
  });
  return {
    store,
    async close() {
      expect(deleted, "the deletion happened").toBe(true);
      await reader.close();
      await pruner.close();
    },
  };
}

async function run(
  command: (context: CommandContext) => Promise<number>,
  store: EventStore,
  args: string[],
  signal?: AbortSignal,
) {
  const stdout = text();
  const stderr = text();
  const context: CommandContext = {
    args,
    io: { stdout, stderr, env: {}, ...(signal ? { signal } : {}) },
    storeUrl: "sqlite:ledger.db",
    storeSource: "flag",
    openStore: async () => store,
  };
  try {
    return { code: await command(context), stdout: stdout.text, stderr: stderr.text };
  } catch (error) {
    return { error, stdout: stdout.text, stderr: stderr.text };
  }
}

const verify = (store: EventStore, args: string[]) => run(verifyCommand, store, args);

const readsRunOfB = (fromSeq: number) => (method: string, args: unknown[]) => {
  const request = args[0] as { sessionId?: string; fromSeq?: number } | undefined;
  return method === "readRun" && request?.sessionId === "b" && request.fromSeq === fromSeq;
};

/** Each moment of verify at which b is deleted, and what verify reads then. */
const MOMENTS = [
  {
    moment: "after the sessions were listed, before b's runs were",
    when: (method: string, args: unknown[]) => method === "listRuns" && args[0] === "b",
  },
  { moment: "after b's runs were listed, before its events were read", when: readsRunOfB(0) },
  {
    moment: "between two pages of b's run (its head then says 0 events)",
    when: readsRunOfB(2000),
  },
  {
    moment: "after b's events were read, before the blob they name was (then missing)",
    when: (method: string) => method === "getBlobs" || method === "getBlob",
  },
];

/** Each read of b's events after its first page. */
const readsLaterPageOfB = (method: string, args: unknown[]) => {
  const request = args[0] as { sessionId?: string; after?: number } | undefined;
  return method === "readSession" && request?.sessionId === "b" && (request.after ?? 0) > 0;
};

describe("verify while another connection deletes a session (prune in another process)", () => {
  for (const [index, { moment, when }] of MOMENTS.entries())
    it(`--all: b deleted ${moment} is gone, not tampered with; exit 0`, async () => {
      const { store, close } = await deletingStore(await ledger(`all-${index}.db`), when);
      const result = await verify(store, ["--all"]);
      await close();
      expect(result.stdout).toBe(
        [
          "ok      session a  1 run(s)",
          "gone    session b  deleted while verify ran: not checked",
          "ok      session c  1 run(s)",
          "2 session(s), 2 run(s): all intact (1 session(s) deleted while verify ran)",
          "",
        ].join("\n"),
      );
      expect(result).toMatchObject({ code: 0, stderr: "" });
    });

  it("--all --json: the gone session's entry says so", async () => {
    const path = await ledger("all-json.db");
    const { store, close } = await deletingStore(path, readsRunOfB(2000));
    const result = await verify(store, ["--all", "--json"]);
    await close();
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({
      ok: true,
      sessions: [
        { sessionId: "a", ok: true, runs: 1, failing: [] },
        { sessionId: "b", ok: true, gone: true, runs: 0, failing: [] },
        { sessionId: "c", ok: true, runs: 1, failing: [] },
      ],
      file: { ok: true, problems: [] },
    });
  });

  it("verify <session>: the session deleted while it is verified is not found (exit 3), never tampered with", async () => {
    for (const fromSeq of [0, 2000]) {
      const path = await ledger(`one-${fromSeq}.db`);
      const { store, close } = await deletingStore(path, readsRunOfB(fromSeq));
      const result = await verify(store, ["b"]);
      await close();
      expect(result.stdout).not.toContain("TAMPERED");
      expect(result.error).toMatchObject({
        exitCode: 3,
        message: 'session "b" was deleted while verify ran: 0 of 1 run(s) checked before it was',
      });
    }
  });

  it("a session that is not deleted still fails when tampered with: its events are there", async () => {
    const path = await ledger("kept.db");
    const { store, close } = await deletingStore(path, readsRunOfB(2000));
    // b's absence excuses no other session.
    tamperWithEvent(path, { sessionId: "c", runId: "r", seq: 0 });
    const result = await verify(store, ["--all"]);
    await close();
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("FAILED  session c\n  TAMPERED  run r  bad seq 0");
    expect(result.stdout).toContain("gone    session b");
  });
});

describe("export, inspect, tail and the viewer of a session another connection deletes part way through the read", () => {
  it("export --output: exit 3, and the file that was there is left as it was (never a cut-short export)", async () => {
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const path = await ledger(`export-${format}.db`);
      const output = join(folder, `b-${format}.out`);
      writeFileSync(output, "the last good export\n");
      const { store, close } = await deletingStore(path, readsLaterPageOfB);
      const result = await run(exportCommand, store, ["b", "--format", format, "--output", output]);
      await close();
      expect(result.error, format).toMatchObject({
        exitCode: 3,
        message: 'session "b" was deleted while export ran: the export would not be complete',
      });
      expect(readFileSync(output, "utf8")).toBe("the last good export\n");
    }
  });

  it("inspect (text and --json): exit 3, never a run left open that was not", async () => {
    for (const args of [["b"], ["b", "--json"]]) {
      const path = await ledger(`inspect-${args.length}.db`);
      const { store, close } = await deletingStore(path, readsLaterPageOfB);
      const result = await run(inspectCommand, store, args);
      await close();
      expect(result.stdout).toBe("");
      expect(result.error).toMatchObject({
        exitCode: 3,
        message: 'session "b" was deleted while inspect ran: what was read of it may be cut short',
      });
    }
  });

  it("the viewer answers 404 for it, never a run tree of what it read before the deletion", async () => {
    const path = await ledger("viewer.db");
    const { store, close } = await deletingStore(path, readsLaterPageOfB);
    const viewer = await startViewer({ store });
    try {
      const response = await fetch(new URL("/api/sessions/b", viewer.url));
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({
        error: "session b was deleted while the viewer read it",
        code: "not-found",
      });
    } finally {
      await viewer.close();
      await close();
    }
  });

  it("tail and tail --follow: exit 3 once the session is gone, never a wait for events that cannot come", async () => {
    for (const follow of [[], ["--follow", "--interval", "10"]]) {
      const path = await ledger(`tail-${follow.length}.db`);
      const { store, close } = await deletingStore(path, readsLaterPageOfB);
      // Without the check, --follow polls the deleted session until this stops it (exit 0).
      const stop = AbortSignal.timeout(5000);
      const result = await run(tailCommand, store, ["b", ...follow], stop);
      await close();
      expect(result.error, follow.join(" ")).toMatchObject({
        exitCode: 3,
        message:
          'session "b" was deleted while tail ran: the events printed may stop short of its end',
      });
      expect(result.stdout.split("\n")).toHaveLength(501);
    }
  });

  it("a session deleted by no one is exported and inspected whole", async () => {
    const path = await ledger("kept-export.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const exported = await run(exportCommand, store, ["b"]);
    expect(exported.code).toBe(0);
    expect(exported.stdout.trim().split("\n")).toHaveLength(LONG);
    const inspected = await run(inspectCommand, store, ["b"]);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toContain("COMPLETED");
    await store.close();
  });
});
