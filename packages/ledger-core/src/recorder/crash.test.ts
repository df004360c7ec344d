import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { runUntilKilled as runChildUntilKilled } from "../testing/killed-child.test.data.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-crash-", { beforeAll, afterAll });

const core = new URL("../../dist/index.js", import.meta.url).href;
const sqlite = new URL("../../dist/stores/sqlite/index.js", import.meta.url).href;

// The agent process: a model call asks for three tools, run in parallel (one group commit).
// `lookup` answers at once; `ship` (idempotent) and `pay` never return: the process is
// killed while they are at the warehouse and the bank.
const agent = `
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.init();
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "shop" } });
await recorder.startRun();
const model = await recorder.beforeModelCall({ request: { prompt: "buy" } });
await recorder.modelCompleted(model, { toolCalls: ["lookup", "ship", "pay"] });
const [lookup] = await Promise.all([
  recorder.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {}, effect: { kind: "read", idempotent: true } }),
  recorder.beforeToolCall({ toolCallId: "c2", name: "ship", args: {}, effect: { kind: "write", idempotent: true } }),
  recorder.beforeToolCall({ toolCallId: "c3", name: "pay", args: { amount: 5 }, effect: { kind: "write", idempotent: false } }),
]);
await recorder.toolCompleted(lookup, "in stock");
process.stdout.write("in-flight\\n");
setInterval(() => {}, 1000);
`;

function runUntilKilled(path: string): Promise<void> {
  return runChildUntilKilled(agent, [path], "in-flight");
}

const read = { kind: "read", idempotent: true } as const;
const write = { kind: "write", idempotent: true } as const;
const pays = { kind: "write", idempotent: false } as const;

describe("resume after SIGKILL with parallel tool calls in flight", () => {
  it("answers the finished call, retries the idempotent one and surfaces the payment", async () => {
    const path = join(dir, "crash.db");
    await runUntilKilled(path);
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({ ok: true });
    expect((await inspectSession(store, "s")).unresolved.map((a) => a.name)).toEqual([
      "ship",
      "pay",
    ]);

    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "shop" },
    });
    await resumed.startRun();
    const model = await resumed.beforeModelCall({ request: { prompt: "buy" } });
    expect(model.replayed?.status).toBe("completed");
    const outcomes = await Promise.allSettled([
      resumed.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {}, effect: read }),
      resumed.beforeToolCall({ toolCallId: "c2", name: "ship", args: {}, effect: write }),
      resumed.beforeToolCall({ toolCallId: "c3", name: "pay", args: { amount: 5 }, effect: pays }),
    ]);
    const [lookup, ship, pay] = outcomes;
    expect(lookup).toMatchObject({
      value: { replayed: { status: "completed", result: "in stock" } },
    });
    const retried = (ship as PromiseFulfilledResult<Attempt>).value;
    expect(retried.replayed).toBeUndefined();
    expect(retried.retryOf).toBeTypeOf("string");
    expect(pay.status).toBe("rejected");
    expect(
      LedgerError.isInstance((pay as PromiseRejectedResult).reason, "unresolved-attempt"),
    ).toBe(true);
    await store.close();
  });
});

// The agent process: its model call's long prompt is kept as a blob, which travels with the
// event that names it (one transaction); the process is killed while the model is called.
const diesDuringModelCall = `
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.init();
let puts = 0;
const putBlobs = store.putBlobs.bind(store);
store.putBlobs = async (contents, options) => {
  puts++;
  return putBlobs(contents, options);
};
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "writer" } });
await recorder.startRun();
await recorder.beforeModelCall({ request: { prompt: "a long document ".repeat(20000) } });
process.stdout.write(puts === 0 ? "calling-model\\n" : "put-of-its-own\\n");
setInterval(() => {}, 1000);
`;

describe("a writer killed while its model call, whose prompt is kept in a blob, is out", () => {
  it("left the blob and the event that names it, which resume reads and deletion collects", async () => {
    const path = join(dir, "blob-then-killed.db");
    // "calling-model": no put of its own went before the append (the blob travelled with it).
    await runChildUntilKilled(diesDuringModelCall, [path], "calling-model");
    const store = new SqliteEventStore({ path });
    await store.init();
    const { default: Database } = await import("better-sqlite3");
    const blobCount = () => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare("SELECT count(*) AS n FROM blobs").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    expect(blobCount()).toBeGreaterThan(0);
    // The call is in flight, and its request reads back whole from the blob.
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved.map((attempt) => attempt.kind)).toEqual(["model"]);
    const requested = (await store.readRun({ sessionId: "s", runId: "r" })).events.find(
      (event) => event.type === "model.requested",
    );
    const ref = requested?.evidenceRefs?.[0] as string;
    expect(new TextDecoder().decode(await store.getBlob(ref))).toContain("a long document");
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "writer" },
    });
    await resumed.cancelRun("the writer died");
    const deleted = await store.deleteSession("s", { blobGraceMs: 0 });
    expect(deleted.deletedBlobs).toBeGreaterThan(0);
    expect(blobCount()).toBe(0);
    await store.close();
  });
});
