import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { childLines } from "../testing/crash-child.js";
import { scratchDirectory } from "../testing/scratch-directory.js";

const dir = scratchDirectory("agent-ledger-two-resumers-", { beforeAll, afterAll });

const core = new URL("../../dist/index.js", import.meta.url).href;
const sqlite = new URL("../../dist/stores/sqlite/index.js", import.meta.url).href;

// An agent loop as its own process: `<db> fresh|resume [barrier]`. Three model calls, a tool
// call (idempotent) after each of the first two, each turn ending with a checkpoint. It prints one JSON line per thing it does:
// `ready` once its recorder has read the run (a resumer then waits for the barrier file, so two
// resumers race for real), `effect` for each model call it pays for and each tool it runs, and
// `finished` or `error` at the end. A fresh run stops inside tool call c1 (`inFlight`) until
// SIGCONT: the test kills it there, or stops it (SIGSTOP) and lets it go on later (a zombie).
const agent = `
const { existsSync } = await import("node:fs");
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const [path, mode, barrier] = process.argv.slice(1);
const say = (line) => process.stdout.write(JSON.stringify(line) + "\\n");
const store = new SqliteEventStore({ path });
await store.init();
const address = { store, sessionId: "s", runId: "r", actor: { type: "agent", id: "worker" } };
const recorder = mode === "fresh" ? new SessionRecorder(address) : await SessionRecorder.resume(address);
say({ ready: true });
if (barrier) while (!existsSync(barrier)) await new Promise((resolve) => setTimeout(resolve, 1));
try {
  await recorder.startRun();
  for (let turn = 0; ; turn++) {
    const model = await recorder.beforeModelCall({ request: { turn } });
    let calls = model.replayed?.result;
    if (model.replayed?.status !== "completed") {
      say({ effect: "model " + turn });
      calls = turn < 2 ? ["c" + turn] : [];
      await recorder.modelCompleted(model, calls);
    }
    if (calls.length === 0) break;
    for (const id of calls) {
      const call = await recorder.beforeToolCall({ toolCallId: id, name: "write", args: { id }, effect: { kind: "write", idempotent: true } });
      if (call.replayed?.status === "completed") continue;
      say({ effect: "tool " + id });
      if (mode === "fresh" && id === "c1") {
        const alive = setInterval(() => {}, 1000);
        const resumed = new Promise((resolve) => process.once("SIGCONT", resolve));
        say({ inFlight: true });
        await resumed;
        clearInterval(alive);
      }
      await recorder.toolCompleted(call, "written");
    }
    await recorder.checkpoint({ turn, at: Date.now() });
  }
  await recorder.completeRun({ answer: "done" });
  say({ finished: true });
} catch (error) {
  say({ error: { code: error.code, name: error.name, message: error.message } });
}
await store.close();
`;

interface Line {
  ready?: true;
  inFlight?: true;
  effect?: string;
  finished?: true;
  error?: { code?: string; name: string; message: string };
}

/** The agent in a child process; `heard` hears each line it prints. */
const agentProcess = (args: string[], heard?: (line: Line, child: ChildProcess) => void) =>
  childLines<Line>(["--input-type=module", "-e", agent, ...args], heard);

const effects = (lines: Line[]) => lines.flatMap((line) => (line.effect ? [line.effect] : []));
const outcome = (lines: Line[]) => lines.find((line) => line.finished || line.error);

/** A fresh run that dies (SIGKILL) inside tool call c1, the first model call and c0 recorded. */
async function crashedRun(path: string) {
  const { exited } = agentProcess([path, "fresh"], (line, child) => {
    if (line.inFlight) child.kill("SIGKILL");
  });
  const crashed = await exited;
  expect(crashed.signal, crashed.stderr).toBe("SIGKILL");
  expect(effects(crashed.lines)).toEqual(["model 0", "tool c0", "model 1", "tool c1"]);
}

async function expectIntactRun(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({ ok: true });
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs.map((run) => run.status)).toEqual(["completed"]);
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    expect(events.filter((event) => event.type === "run.completed")).toHaveLength(1);
    return events.length;
  } finally {
    await store.close();
  }
}

const anotherProcess = "another process has this run";

describe("two processes resume the same crashed run at once", () => {
  it("one finishes; the other fails with conflict or run-closed, says why, and pays for nothing", async () => {
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `race-${round}.db`);
      await crashedRun(path);
      const barrier = join(dir, `race-${round}.go`);
      let ready = 0;
      const release = (line: Line) => {
        if (line.ready && ++ready === 2) writeFileSync(barrier, "");
      };
      const both = await Promise.all([
        agentProcess([path, "resume", barrier], release).exited,
        agentProcess([path, "resume", barrier], release).exited,
      ]);
      const winners = both.filter((worker) => outcome(worker.lines)?.finished);
      const losers = both.filter((worker) => outcome(worker.lines)?.error);
      expect(winners, JSON.stringify(both)).toHaveLength(1);
      expect(losers, JSON.stringify(both)).toHaveLength(1);
      // The winner runs c1 again (idempotent) and makes the last model call; the loser nothing.
      expect(effects(winners[0]?.lines ?? [])).toEqual(["tool c1", "model 2"]);
      expect(effects(losers[0]?.lines ?? [])).toEqual([]);
      const error = outcome(losers[0]?.lines ?? [])?.error;
      expect(["conflict", "run-closed"]).toContain(error?.code);
      expect(error?.message).toContain(anotherProcess);
      expect(error?.message).toMatch(
        /^(run r was written by another writer|another writer closed run r)/,
      );
      await expectIntactRun(path);
    }
  });

  it("a worker that resumes the run once the other has closed it re-executes it from the ledger: it finishes, pays nothing and writes nothing", async () => {
    const path = join(dir, "after-close.db");
    await crashedRun(path);
    const first = await agentProcess([path, "resume"]).exited;
    expect(outcome(first.lines), first.stderr).toEqual({ finished: true });
    const length = await expectIntactRun(path);
    // The second worker read the run closed: its checkpoints, as its calls and its end, are
    // answered from the ledger (they were "run main is completed and accepts no more events").
    const second = await agentProcess([path, "resume"]).exited;
    expect(outcome(second.lines), second.stderr).toEqual({ finished: true });
    expect(effects(second.lines)).toEqual([]);
    expect(await expectIntactRun(path)).toBe(length);
  });

  it("a zombie of the crashed process that comes back has its late writes refused, saying why", async () => {
    const path = join(dir, "zombie.db");
    let stopped: () => void = () => {};
    const isStopped = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    const zombie = agentProcess([path, "fresh"], (line, child) => {
      if (!line.inFlight) return;
      child.kill("SIGSTOP");
      stopped();
    });
    await isStopped;
    const resumed = await agentProcess([path, "resume"]).exited;
    expect(outcome(resumed.lines), resumed.stderr).toEqual({ finished: true });
    expect(effects(resumed.lines)).toEqual(["tool c1", "model 2"]);
    const length = await expectIntactRun(path);

    zombie.child.kill("SIGCONT");
    const late = await zombie.exited;
    // Its tool call c1 ended after the other process had closed the run: refused, and it goes
    // no further (no model call).
    expect(effects(late.lines)).toEqual(["model 0", "tool c0", "model 1", "tool c1"]);
    const error = outcome(late.lines)?.error;
    expect(error).toMatchObject({ code: "run-closed", name: "RunClosedError" });
    expect(error?.message).toBe(
      `another writer closed run r (it is completed) while this recorder had it open: ${anotherProcess} (two workers resumed it at once, or a process taken for dead came back), so nothing was written and this recorder cannot go on: leave the run to that writer; a closed run accepts no more events.`,
    );
    expect(await expectIntactRun(path)).toBe(length);
  });
});
