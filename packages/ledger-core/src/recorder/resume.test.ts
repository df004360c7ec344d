import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { killAtMarker, readReports } from "../testing/crash-child.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { actor, address, delegate, shop } from "./resume-loops.test.data.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-resume-", { beforeAll, afterAll });

async function open(file: string) {
  const store = new SqliteEventStore({ path: join(dir, file) });
  await store.init();
  return store;
}

const dist = (path: string) => JSON.stringify(new URL(`../../dist/${path}`, import.meta.url).href);

/**
 * Runs `body` in a child process with `recorder` (a SessionRecorder on the SQLite file `file`)
 * and the loops of resume-loops.test.data.ts in scope, then SIGKILLs it where the body ends: the
 * process dies there. Returns what the body reported with `report(value)` (reportToParent: the
 * kill loses none of it), and the file opened again.
 */
async function crashAfter(file: string, body: string) {
  const script = `
const { SessionRecorder } = await import(${dist("index.js")});
const { SqliteEventStore } = await import(${dist("stores/sqlite/index.js")});
const { haltHere, reportToParent: report } = await import(${dist("testing/index.js")});
const { actor, address, shop, delegate } = await import(${dist("recorder/resume-loops.test.data.js")});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.init();
const recorder = new SessionRecorder({ store, ...address, actor });
${body}
await haltHere("DEAD");
`;
  const { stdout } = await killAtMarker(
    ["--input-type=module", "-e", script, join(dir, file)],
    "DEAD",
  );
  return { store: await open(file), reports: readReports(stdout) };
}

describe("resume re-executes a loop that retried calls", () => {
  it("answers the recorded retries from the ledger: nothing is paid twice", async () => {
    // The process dies after the payment went through, before it closes the run.
    const { store, reports } = await crashAfter(
      "retry.db",
      "const { calls, run } = shop(); report(await run(recorder)); report(calls);",
    );
    expect(reports).toEqual(["charged", { model: 2, pay: 2 }]);

    // A new one re-executes the loop.
    const { calls, run } = shop();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    expect(await run(resumed)).toBe("charged");
    expect(calls).toEqual({ model: 0, pay: 0 });
    expect(resumed.replay?.atFrontier).toBe(true);
    expect((await inspectSession(store, "s")).runs[0]?.length).toBe(9);
    await store.close();
  });

  it("a retry that was in flight at the crash is surfaced, not made again", async () => {
    // A call that declares no effect: unknown, so not idempotent.
    const pay = { toolCallId: "pay-1", name: "pay", args: { amount: 5 } };
    // The process dies while the retried payment is at the bank.
    const { store, reports } = await crashAfter(
      "retry-in-flight.db",
      `await recorder.startRun();
const failed = await recorder.beforeToolCall(${JSON.stringify(pay)});
await recorder.toolFailed(failed, new Error("bank timeout"));
report((await recorder.retry(failed)).attemptId);`,
    );
    const [retried] = reports;

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const again = await resumed.beforeToolCall(pay);
    expect(again.replayed?.status).toBe("failed");
    await expect(resumed.retry(again)).rejects.toMatchObject({
      code: "unresolved-attempt",
      attempt: { attemptId: retried },
    });
    await store.close();
  });
});

describe("resume re-executes a loop whose runs were already closed", () => {
  it("closing a child run that completed before the crash answers from the ledger", async () => {
    // The process dies after the helper finished, before the parent did.
    const { store } = await crashAfter("closed-child.db", "await delegate(recorder, true);");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const closed = await delegate(resumed, false);
    expect(closed?.type).toBe("run.completed");
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.status).toBe("completed");
    expect(inspection.runs[0]?.children.map((run) => [run.status, run.length])).toEqual([
      ["completed", 4],
    ]);
    await store.close();
  });

  it("closing a resumed root run again returns its recorded end; closing it otherwise is run-closed", async () => {
    // The process dies after the run completed, before its caller heard of it.
    const { store, reports } = await crashAfter(
      "closed-root.db",
      "report((await delegate(recorder, false)).eventId);",
    );
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const again = await delegate(resumed, false);
    expect(again?.eventId).toBe(reports[0]);
    await expect(resumed.failRun(new Error("late"))).rejects.toMatchObject({ code: "run-closed" });
    expect((await store.runHead(address)).length).toBe(2);
    await store.close();
  });

  it("completing a resumed run with other output than the recorded one is replay-divergence", async () => {
    // The re-executed loop is not the one that ran: its answer would silently be the old one.
    const { store } = await crashAfter("closed-other.db", "await delegate(recorder, false);");
    const before = await store.readSession({ sessionId: "s" });
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    await resumed.startRun();
    await expect(resumed.completeRun("it costs 6 EUR")).rejects.toMatchObject({
      code: "replay-divergence",
      details: { seq: 1 },
    });
    await expect(resumed.completeRun()).rejects.toMatchObject({ code: "replay-divergence" });
    const recorded = await resumed.completeRun("it costs 5 EUR");
    expect(recorded.payload).toEqual({ output: "it costs 5 EUR" });
    expect(await store.readSession({ sessionId: "s" })).toEqual(before);
    await store.close();
  });

  it("lists the session's runs once to resume a run and re-enter its sub-agents, not once per sub-agent", async () => {
    // Each child of a resumed run listed every run of the session to find its own children:
    // resuming a run with N sub-agents read N x N runs (quadratic round trips and rows).
    const calls = { listRuns: 0 };
    class CountingStore extends MemoryEventStore {
      override listRuns(sessionId: string) {
        calls.listRuns++;
        return super.listRuns(sessionId);
      }
    }
    const store = new CountingStore();
    const count = 40;
    const root = new SessionRecorder({ store, sessionId: "subs", runId: "root", actor });
    await root.startRun();
    for (let index = 0; index < count; index++) {
      const sub = root.child({ actor: { type: "agent", id: `sub${index}` } });
      await sub.startRun({ index });
      const grandchild = sub.child({ actor: { type: "agent", id: "helper" } });
      await grandchild.startRun();
      await grandchild.completeRun();
      if (index % 2 === 0) await sub.completeRun({ index });
    }
    const recorded = (await store.listRuns("subs")).map((run) => run.runId);
    calls.listRuns = 0;
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "subs",
      runId: "root",
      actor,
    });
    for (let index = 0; index < count; index++) {
      const sub = resumed.child({ actor: { type: "agent", id: `sub${index}` } });
      await sub.startRun({ index });
      // The recorded sub-agent is adopted, and so is its own recorded child.
      expect(sub.runId).toBe(recorded[2 * index + 1]);
      const helper = sub.child({ actor: { type: "agent", id: "helper" } });
      expect(helper.runId).toBe(recorded[2 * index + 2]);
      if (index % 2 === 1) await sub.completeRun({ index });
    }
    expect(calls.listRuns).toBe(1);
    const runs = await store.listRuns("subs");
    expect(runs).toHaveLength(1 + 2 * count);
    expect(runs.filter((run) => run.status === "running").map((run) => run.runId)).toEqual([
      "root",
    ]);
  });

  it("adopts each of 600 recorded sub-agents by its actor, without searching the others", async () => {
    // child() scanned the recorded children for the first of its actor and spliced it out:
    // re-entering N sub-agents compared N x N / 2 actor ids. Each comparison reads the id.
    const store = new MemoryEventStore();
    const count = 600;
    const root = new SessionRecorder({ store, sessionId: "many", runId: "root", actor });
    await root.startRun();
    const recorded: string[] = [];
    for (let index = 0; index < count; index++) {
      const sub = root.child({ actor: { type: "agent", id: `sub${index}` } });
      await sub.startRun();
      await sub.completeRun();
      recorded.push(sub.runId);
    }
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "many",
      runId: "root",
      actor,
    });
    let idReads = 0;
    // In reverse: the last one recorded was the last a search came to.
    for (let index = count - 1; index >= 0; index--) {
      const id = `sub${index}`;
      const counted = {
        type: "agent",
        get id() {
          idReads++;
          return id;
        },
      } as Actor;
      expect(resumed.child({ actor: counted }).runId).toBe(recorded[index]);
    }
    // A few reads per child (its own validation), never one per other recorded child.
    expect(idReads).toBeLessThan(10 * count);
    // All adopted: the next child of an actor seen before is a new run.
    const extra = resumed.child({ actor: { type: "agent", id: "sub0" } });
    expect(recorded).not.toContain(extra.runId);
  });

  it("resume without a runId is invalid-event at $.runId, not a not-found for a made-up run", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    for (const runId of [undefined, ""]) {
      const error = await SessionRecorder.resume({
        store,
        sessionId: address.sessionId,
        actor,
        runId: runId as unknown as string,
      }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-event"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe("$.runId");
    }
  });
});

describe("retry on resume", () => {
  it("keeps the caller's metadata when it runs again a recorded tool retry that was in flight", async () => {
    const call = {
      toolCallId: "c1",
      name: "fetch",
      args: {},
      effect: { kind: "read", idempotent: true },
    } as const;
    // The process dies while the retry (with its metadata) is in flight.
    const { store } = await crashAfter(
      "retry-metadata.db",
      `await recorder.startRun();
const failed = await recorder.beforeToolCall(${JSON.stringify(call)});
await recorder.toolFailed(failed, new Error("timeout"));
await recorder.retry(failed, { metadata: { try: 1 } });`,
    );
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const replayed = await resumed.beforeToolCall(call);
    expect(replayed.replayed?.status).toBe("failed");
    const again = await resumed.retry(replayed, { metadata: { try: 2 } });
    expect(again.replayed).toBeUndefined();
    const events = (await store.readRun(address)).events;
    const requested = events.find((event) => event.attemptId === again.attemptId);
    expect(requested?.metadata).toMatchObject({ try: 2 });
    await store.close();
  });
});

describe("a failed model call on resume", () => {
  it("is answered with its error, metadata and what it had produced (partial)", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    const call = await first.beforeModelCall({ request: { q: "weather?" } });
    await first.modelFailed(call, new Error("stream cut"), {
      partial: { text: "It is sun" },
      metadata: { provider: "fake" },
    });

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const replayed = (await resumed.beforeModelCall({ request: { q: "weather?" } })).replayed;
    expect(replayed).toMatchObject({
      status: "failed",
      error: { message: "stream cut" },
      partial: { text: "It is sun" },
      metadata: { provider: "fake" },
    });
  });
});

describe("sameModelRequest", () => {
  it("compares a request with a model attempt as the recorder records it: after redaction", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: ["request.apiKey"],
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: { q: "weather?", apiKey: "k-1" } });
    expect(call.request).toEqual({ q: "weather?", apiKey: "[redacted]" });
    // The same call (whatever the redacted value), and not another one.
    expect(recorder.sameModelRequest(call, { q: "weather?", apiKey: "k-2" })).toBe(true);
    expect(recorder.sameModelRequest(call, { q: "weather?", apiKey: "k-1" })).toBe(true);
    expect(recorder.sameModelRequest(call, { q: "rain?", apiKey: "k-1" })).toBe(false);
    // A tool attempt is never the same model request.
    const tool = await recorder.beforeToolCall({ name: "lookup", args: { q: "weather?" } });
    expect(recorder.sameModelRequest(tool, { q: "weather?" })).toBe(false);
  });
});
