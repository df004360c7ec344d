import {
  type AttemptView,
  inspectSession,
  MemoryEventStore,
  type RunView,
  SessionRecorder,
} from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { renderInspection } from "./render-inspection.js";
import { recordDemoSession } from "./session-fixture.test.data.js";

/** A memory store and the started run of session `sessionId`, recorded as agent `agentId`. */
async function startedRun(sessionId: string, agentId: string) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: agentId } });
  await recorder.startRun();
  return { store, recorder };
}

describe("renderInspection", () => {
  it("places each child run under its cause looking at every child once, not once per attempt", () => {
    // Every attempt scanned every child run: quadratic in a run of 20,000 tool calls that each
    // started a sub-agent. Children count reads of causedByEventId.
    let reads = 0;
    const count = 500;
    const attempts: AttemptView[] = Array.from({ length: count }, (_, index) => ({
      kind: "tool",
      attemptId: `a${index}`,
      stepId: `s${index}`,
      runId: "root",
      status: "completed",
      name: "delegate",
      toolCallId: `c${index}`,
      requestedAt: "2026-01-01T00:00:00.000Z",
      requestSeq: index + 1,
      requestEventId: `request-${index}`,
      request: null,
    }));
    const child = (index: number, caused: boolean): RunView => {
      const view: RunView = {
        runId: `child-${index}`,
        parentRunId: "root",
        status: "completed",
        length: 2,
        startedAt: "2026-01-01T00:00:00.000Z",
        steps: [],
        children: [],
      };
      Object.defineProperty(view, "causedByEventId", {
        enumerable: true,
        get: () => {
          reads++;
          return caused ? `request-${index}` : undefined;
        },
      });
      return view;
    };
    const root: RunView = {
      runId: "root",
      status: "completed",
      length: 2 * count + 2,
      startedAt: "2026-01-01T00:00:00.000Z",
      steps: attempts.map((attempt) => ({
        stepId: attempt.stepId,
        kind: "tool",
        attempts: [attempt],
      })),
      // Every other child was caused by an attempt; the last ones by none.
      children: Array.from({ length: count + 2 }, (_, index) =>
        child(index, index < count && index % 2 === 0),
      ),
    };
    const text = renderInspection({ sessionId: "s", eventCount: 0, runs: [root], unresolved: [] });
    expect(reads).toBeLessThanOrEqual(2 * (count + 2));
    const lines = text.split("\n");
    const at = (needle: string) => lines.findIndex((line) => line.includes(needle));
    expect(at("run (child-4)")).toBe(at("[c4]") + 1);
    expect(lines[at("run (child-4)")]).toContain("caused by tool delegate [c4] (attempt a4)");
    expect(at("[c5]")).toBe(at("[c4]") + 2);
    // Children caused by no attempt come after the attempts, in their order.
    expect(at("run (child-1)")).toBeGreaterThan(at(`[c${count - 1}]`));
    expect(at("run (child-500)")).toBe(at("run (child-499)") + 1);
    expect(at("run (child-501)")).toBe(at("run (child-500)") + 1);
  });

  it("draws the tree with retries, the child under its cause and unresolved attempts", async () => {
    const store = new MemoryEventStore();
    const demo = await recordDemoSession(store, "render");
    const retried = await demo.recorder.beforeModelCall({
      request: { modelId: "gpt-4o-mini", prompt: [] },
    });
    await demo.recorder.modelFailed(retried, new Error("overloaded"));
    const second = await demo.recorder.retry(retried);
    await demo.recorder.modelCompleted(second, { text: "done" });
    const text = renderInspection(await inspectSession(store, "render"), {
      storeUrl: "sqlite:./my ledger.db",
    });
    const lines = text.split("\n");
    expect(lines[0]).toBe("session render  16 events  2 runs  1 unresolved  42 in / 17 out tokens");
    const find = lines.findIndex((line) => line.includes("tool find_slots [call-1]  completed"));
    expect(lines[find + 1]).toMatch(
      /^ {3}├─ availability-checker \(.+\) {2}FAILED .*caused by tool find_slots/,
    );
    expect(lines[find + 3]).toContain("failed: Error: no answer");
    expect(text).toMatch(/├─ model gpt-4o-mini {2}failed {2}\d+ ms {2}"overloaded"/);
    expect(text).toMatch(/└─ ↻ model gpt-4o-mini {2}completed .*\(retry of /);
    expect(text).toContain("tool book_table [call-2]  !! UNRESOLVED");
    expect(text).toContain("effect=write,not idempotent");
    expect(text).toContain(`--abandon "reason" --store 'sqlite:./my ledger.db' --`);
  });

  it("warns on a run whose seqs have a gap, with the command that verifies its session", () => {
    const run = (runId: string, seqGap?: RunView["seqGap"]): RunView => ({
      runId,
      actor: { type: "agent", id: "a" },
      status: "completed",
      length: 25,
      startedAt: "2026-01-01T00:00:00.000Z",
      durationMs: 5,
      steps: [],
      children: [],
      ...(seqGap ? { seqGap } : {}),
    });
    const inspection = {
      sessionId: "s-base",
      eventCount: 40,
      runs: [
        {
          ...run("main", { after: 9, next: 11 }),
          children: [run("gone-start", { after: -1, next: 3 }), run("intact")],
        },
        run("shuffled", { after: 4, next: 4 }),
      ],
      unresolved: [],
    };
    const lines = renderInspection(inspection, { storeUrl: "sqlite:./my ledger.db" }).split("\n");
    const store = "--store 'sqlite:./my ledger.db'";
    expect(lines.slice(1, 7)).toEqual([
      "├─ a (main)  COMPLETED  5 ms  25 events",
      `│  ├─ !! run main is not intact (seq 10 is missing): run agent-ledger verify ${store} s-base`,
      "│  ├─ a (gone-start)  COMPLETED  5 ms  25 events",
      `│  │  └─ !! run gone-start is not intact (seqs 0-2 are missing): run agent-ledger verify ${store} s-base`,
      "│  └─ a (intact)  COMPLETED  5 ms  25 events",
      "└─ a (shuffled)  COMPLETED  5 ms  25 events",
    ]);
    expect(lines[7]).toBe(
      `   └─ !! run shuffled is not intact (seq 4 comes again after seq 4): run agent-ledger verify ${store} s-base`,
    );
    // A session id that looks like an option comes after `--`.
    expect(renderInspection({ ...inspection, sessionId: "-x" })).toContain(
      "run agent-ledger verify -- -x",
    );
  });

  it("says an abandoned call's time is from its request to the abandonment, not a runtime", () => {
    // "abandoned  3 h 05 m" read as a call that ran three hours; it was abandoned by a person the
    // morning after a crash.
    const attempt = (status: AttemptView["status"], attemptId: string): AttemptView => ({
      kind: "tool",
      attemptId,
      stepId: attemptId,
      runId: "main",
      status,
      name: "charge",
      requestedAt: "2026-01-01T00:00:00.000Z",
      requestSeq: 1,
      requestEventId: `request-${attemptId}`,
      request: null,
      durationMs: 11_100_000,
      ...(status === "abandoned" ? { outcome: "charged by phone" } : {}),
    });
    const lines = renderInspection({
      sessionId: "s",
      eventCount: 6,
      runs: [
        {
          runId: "main",
          status: "running",
          length: 6,
          startedAt: "2026-01-01T00:00:00.000Z",
          steps: [
            { stepId: "a1", kind: "tool", attempts: [attempt("abandoned", "a1")] },
            { stepId: "a2", kind: "tool", attempts: [attempt("completed", "a2")] },
          ],
          children: [],
        },
      ],
      unresolved: [],
    }).split("\n");
    expect(lines[2]).toBe(
      '   ├─ tool charge  abandoned  3 h 05 m after it was requested  "charged by phone"  attempt a1',
    );
    expect(lines[3]).toBe("   └─ tool charge  completed  3 h 05 m  attempt a2");
  });

  it("lists a call its caller stopped as unresolved without saying a crash cut it off", async () => {
    // An AI SDK tool whose call's abortSignal aborted while it ran: no outcome is written, and
    // nothing of the abort (core's leaveUnresolved keeps why in the process that stopped it).
    // The section said "(in flight, or lost in a crash)": no process died.
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "stopped",
      runId: "turn-1",
      actor: { type: "agent", id: "assistant", framework: "ai-sdk" },
    });
    await recorder.startRun();
    const charge = await recorder.beforeToolCall({
      toolCallId: "c1",
      name: "charge",
      args: { cents: 500 },
      effect: { kind: "write", idempotent: false },
    });
    recorder.leaveUnresolved(charge, "its caller's abortSignal stopped it while it ran");
    const text = renderInspection(await inspectSession(store, "stopped"));
    expect(text).toContain(
      "\n!! 1 UNRESOLVED attempt: requested, never completed, failed or abandoned (in flight, or left so by a crash or by its caller stopping it):\n   tool charge [c1]  run turn-1 seq 1",
    );
    expect(text).not.toMatch(/crash(?! or by its caller)|process died/);
  });

  it("has no unresolved section when everything finished", async () => {
    const { store, recorder } = await startedRun("done", "a");
    await recorder.completeRun("ok");
    const text = renderInspection(await inspectSession(store, "done"));
    expect(text).toMatch(
      /^session done {2}2 events {2}1 run {2}0 unresolved\n└─ a \(.+\) {2}COMPLETED {2}\d+ ms {2}2 events\n$/,
    );
  });

  it("counts one event, one run and one unresolved attempt in the singular", async () => {
    const { store, recorder } = await startedRun("one", "a");
    expect(renderInspection(await inspectSession(store, "one"))).toMatch(
      /^session one {2}1 event {2}1 run {2}0 unresolved\n/,
    );
    await recorder.beforeToolCall({ toolCallId: "c1", name: "send", args: {} });
    const text = renderInspection(await inspectSession(store, "one"));
    expect(text).toMatch(/^session one {2}2 events {2}1 run {2}1 unresolved\n/);
    expect(text).toContain("!! 1 UNRESOLVED attempt: requested, never completed");
  });

  it("says a call declined before it started never ran, where an abandoned call says when", async () => {
    const { store, recorder } = await startedRun("declined", "shop");
    await recorder.declineToolCall(
      { toolCallId: "r1", name: "refund", args: { order: "42" } },
      "denied at its approval request: not this order",
    );
    const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await recorder.abandon(charge, "charged by phone");
    const text = renderInspection(await inspectSession(store, "declined"));
    expect(text).toMatch(
      /tool refund \[r1\] {2}abandoned {2}declined before it ran {2}"denied at its approval request: not this order"/,
    );
    expect(text).toMatch(/tool charge \[c1\] {2}abandoned {2}\d+ ms after it was requested/);
  });

  it("says the tokens each model call, each run and the session report, where they do", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "costs",
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const first = await recorder.beforeModelCall({ request: { model: "gpt", messages: [] } });
    await recorder.modelCompleted(first, {
      text: "hi",
      usage: { inputTokens: { total: 1200, cacheRead: 300 }, outputTokens: { total: 85 } },
    });
    const second = await recorder.beforeModelCall({ request: { model: "gpt", messages: [] } });
    await recorder.modelCompleted(second, { text: "no counts" });
    const sub = recorder.child({ runId: "sub", actor: { type: "agent", id: "b" } });
    await sub.startRun();
    const inner = await sub.beforeModelCall({ request: { model: "gpt", messages: [] } });
    await sub.modelCompleted(inner, { text: "ok", usage: { inputTokens: 10, outputTokens: 2 } });
    await sub.completeRun("ok");
    await recorder.completeRun("ok");
    const lines = renderInspection(await inspectSession(store, "costs")).split("\n");
    expect(lines[0]).toBe(
      "session costs  10 events  2 runs  0 unresolved  1210 in (300 cached) / 87 out tokens",
    );
    expect(lines[1]).toMatch(
      /^└─ a \(main\) {2}COMPLETED {2}\d+ ms {2}6 events {2}1200 in \(300 cached\) \/ 85 out tokens$/,
    );
    expect(lines[2]).toMatch(
      new RegExp(
        `model gpt {2}completed {2}\\d+ ms {2}1200 in \\(300 cached\\) / 85 out tokens {2}attempt ${first.attemptId}$`,
      ),
    );
    expect(lines[3]).toMatch(
      new RegExp(`model gpt {2}completed {2}\\d+ ms {2}attempt ${second.attemptId}$`),
    );
    const subLine = lines.find((line) => line.includes("b (sub)"));
    expect(subLine).toMatch(/COMPLETED {2}\d+ ms {2}4 events {2}10 in \/ 2 out tokens$/);
  });

  it("shows the code and HTTP status a failed call's error carried, a number as well as a text", async () => {
    // A provider's statusCode: 429 and a numeric code were dropped from the recorded error.
    const { store, recorder } = await startedRun("codes", "a");
    const model = await recorder.beforeModelCall({ request: { model: "gpt", messages: [] } });
    const limited = Object.assign(new Error("Too Many Requests"), { statusCode: 429 });
    await recorder.modelFailed(model, limited);
    const tool = await recorder.beforeToolCall({ toolCallId: "c", name: "rpc", args: {} });
    await recorder.toolFailed(tool, Object.assign(new Error("unavailable"), { code: 14 }));
    const inspection = await inspectSession(store, "codes");
    const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts);
    expect(attempts?.map((attempt) => attempt.outcome)).toMatchObject([
      { message: "Too Many Requests", status: 429 },
      { message: "unavailable", code: 14 },
    ]);
    const text = renderInspection(inspection);
    expect(text).toMatch(
      /model gpt {2}failed {2}\d+ ms {2}"Too Many Requests" {2}\(status 429\) {2}attempt/,
    );
    expect(text).toMatch(
      /tool rpc \[c\] {2}failed {2}\d+ ms {2}"unavailable" {2}\(code 14\) {2}attempt/,
    );
  });

  it("says a tool that paused at LangGraph's interrupt() is paused, with its question, not failed with the raw interrupts", async () => {
    // The LangChain adapter records the GraphInterrupt the tool threw as tool.failed (replay
    // reads that); its message is the interrupts as JSON, as LangGraph builds it.
    const { store, recorder } = await startedRun("asks", "a");
    const interrupts = [{ value: { question: "append A to the file?" }, id: "4f2c9e" }];
    const interrupt = Object.assign(new Error(JSON.stringify(interrupts, null, 2)), {
      name: "GraphInterrupt",
    });
    const asking = await recorder.beforeToolCall({ toolCallId: "c1", name: "append", args: {} });
    await recorder.toolFailed(asking, interrupt);
    const broken = await recorder.beforeToolCall({ toolCallId: "c2", name: "rpc", args: {} });
    await recorder.toolFailed(broken, new Error("unavailable"));

    const text = renderInspection(await inspectSession(store, "asks"));
    const line = text.split("\n").find((candidate) => candidate.includes("tool append"));
    expect(line).toMatch(
      /tool append \[c1\] {2}paused at interrupt\(\{"question":"append A to the file\?"\}\) {2}\(recorded as failed: GraphInterrupt; it runs again when the graph resumes\) {2}\d+ ms {2}attempt /,
    );
    expect(line).not.toContain('"id"');
    // Any other failure reads as before.
    expect(text).toMatch(/tool rpc \[c2\] {2}failed {2}\d+ ms {2}"unavailable" {2}attempt/);
  });
  it("draws how a cancelled run ended as a branch of the run, not as its last call's outcome", async () => {
    // Under a tool that completed, an indented "cancelled: ..." line read as that tool's
    // cancellation (found by a user review of a turn stopped by its user).
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "stop",
      runId: "turn",
      actor: { type: "agent", id: "chat" },
    });
    await recorder.startRun();
    const slow = await recorder.beforeToolCall({ toolCallId: "c1", name: "slow", args: {} });
    await recorder.toolCompleted(slow, { done: true });
    await recorder.cancelRun("user pressed stop");
    const lines = renderInspection(await inspectSession(store, "stop")).split("\n");
    const tool = lines.findIndex((line) => line.includes("tool slow [c1]  completed"));
    expect(lines[tool]).toContain("├─ tool slow [c1]  completed");
    expect(lines[tool + 1]).toMatch(/└─ run cancelled: "?user pressed stop/);
  });
});
