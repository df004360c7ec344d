import {
  type EventStore,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { type Agent, type Model, setTracingDisabled } from "@openai/agents";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { FailingStore } from "./testing/failing-store.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";
import { researchFixture, twoWritesFixture } from "./testing/research-agents.js";
import { agentToolFixture } from "./testing/writer-agent.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside the writer's `write`, after it wrote (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-agent-tool-", { beforeAll, afterAll });
ledgers.prepare(
  "writer as a tool: dies inside write",
  "writer as a tool, not instrumented: dies inside write",
  "research twice: dies inside the second call's search",
);

/** The process died while the writer's `write` ran (it has run); the test is the next process. */
async function crashWhileWriteRuns() {
  return ledgers.crashed("writer as a tool: dies inside write");
}

/** What `agent-ledger resolve s <attemptId> --abandon "..."` does on the unresolved call `name`. */
async function abandonUnresolved(store: EventStore, name: string, reason: string) {
  const attempt = (await inspectSession(store, "s")).unresolved.find(
    (unresolved) => unresolved.name === name,
  );
  if (!attempt) throw new Error(`${name} is not unresolved`);
  const person = await SessionRecorder.resume({
    store,
    sessionId: "s",
    runId: attempt.runId,
    actor: { type: "human", id: "on-call" },
  });
  await person.abandon(attempt, reason);
}

/** Resumes the run in a new process, approving every call it asks about, until it stops. */
async function resumeApprovingAll(
  store: EventStore,
  { main, model }: { main: Agent; model: Model },
) {
  const asked: string[] = [];
  let result = await resumeRun(main, runOptions(store, model));
  while (result.status === "interrupted") {
    for (const item of result.interruptions) {
      asked.push(item.name ?? "");
      result.state.approve(item);
    }
    result = await resumeRun(main, { ...runOptions(store, model), state: result.state });
  }
  return { asked, result };
}

/** Runs `main` from the start in this process, approving every call it asks about. */
async function runApprovingAll(store: EventStore, main: Agent, model: Model) {
  const asked: string[] = [];
  let result = await runWithLedger(main, "go", runOptions(store, model));
  while (result.status === "interrupted") {
    for (const item of result.interruptions) {
      asked.push(item.name ?? "");
      result.state.approve(item);
    }
    result = await resumeRun(main, { ...runOptions(store, model), state: result.state });
  }
  return { asked, result };
}

/** The child runs of the root run: agent, status and the kinds of their steps. */
async function childRuns(store: EventStore) {
  const inspection = await inspectSession(store, "s");
  return (inspection.runs[0]?.children ?? []).map((child) => ({
    agent: child.actor?.id,
    status: child.status,
    steps: child.steps.map((step) => step.kind),
  }));
}

describe("an agent used as a tool (Agent.asTool)", () => {
  test("a crash inside a plain SDK tool of an agent the ledger does not instrument: the agent tool call is asked about, not run again by itself", async () => {
    const { store, first } = await ledgers.crashed(
      "writer as a tool, not instrumented: dies inside write",
    );
    expect(first.effects).toEqual(["write héllo 🌍"]);
    // The writer's model asked for write, which its child run does not record: running the
    // agent tool again would write again unseen.
    const second = agentToolFixture({ writeNeedsApproval: false, instrumented: false });
    second.model.calls = 1;
    const paused = await resumeRun(second.main, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["writer_tool"]);
    expect(second.effects).toEqual([]);
    // Rejected (it wrote already), the writer is not run again and the run completes.
    const { state, item } = firstInterruption(paused);
    state.reject(item);
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done.status).toBe("completed");
    expect(second.effects).toEqual([]);
  });

  test("pausing for an approval inside it leaves its call open; approved, it goes on in the same child run", async () => {
    const store = new MemoryEventStore();
    const { effects, main, model, writerModel } = agentToolFixture();
    const paused = await runWithLedger(main, "go", runOptions(store, model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["write"]);
    // The writer did not finish: neither its run nor the tool call that runs it is complete.
    const atPause = await inspectSession(store, "s");
    expect(atPause.runs[0]?.children.map((child) => child.status)).toEqual(["running"]);
    expect(atPause.unresolved.map((attempt) => attempt.name)).toEqual(["writer_tool"]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(main, { ...runOptions(store, model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(effects).toEqual(["write héllo 🌍"]);
    expect(writerModel.calls).toBe(2);
    expect(model.calls).toBe(2);

    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    const [root] = inspection.runs;
    expect(root?.status).toBe("completed");
    expect(root?.children).toHaveLength(1);
    const child = root?.children[0];
    expect(child?.status).toBe("completed");
    // The writer's two model calls and its tool call are all on its one child run.
    expect(child?.steps.map((step) => step.kind)).toEqual(["model", "tool", "model"]);
    // The writer_tool call is one attempt, completed with the writer's answer.
    const writerCalls = await toolCallEvents(store, "call_writer");
    expect(writerCalls.map((event) => event.type)).toEqual(["tool.requested", "tool.completed"]);
    expect(writerCalls[1]?.payload).toMatchObject({ result: "written" });
  });

  test("a crash while its inner tool runs: only that call is asked about (with its agent), not the agent tool call; approved, it completes", async () => {
    const { store, first } = await crashWhileWriteRuns();
    expect(first.effects).toEqual(["write héllo 🌍"]);

    // The new process: writer_tool was in flight, then (inside it) write was in flight. The
    // agent tool has no effect of its own: it runs again, its calls answered from its child run.
    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    second.writerModel.calls = 1; // the scripts go on after the calls the ledger answers
    const paused = await resumeRun(second.main, runOptions(store, second.model));
    expect(
      paused.interruptions.map((item) => [item.name, item.agent.name, item.arguments]),
    ).toEqual([["write", "writer", JSON.stringify({ text: "héllo 🌍" })]]);
    const { asked, result } = await resumeApprovingAll(store, second);
    expect(asked).toEqual(["write"]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual(["write héllo 🌍"]);
    // Only the writer's last model call was live: its first came from the ledger.
    expect(second.writerModel.requests).toHaveLength(1);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    expect(inspection.runs[0]?.children.map((child) => child.status)).toEqual(["completed"]);
    // Its OpenTelemetry span covers the resumed work, inside the root run's: it does not hang
    // under the span of the call the crash cut off, which ended at the crash.
    const spans = await exportedSpans(store, "s");
    const named = (name: string) => spans.filter((span) => span.name === name);
    const end = (span: ReadableSpan | undefined) =>
      span ? span.endTime[0] * 1000 + span.endTime[1] / 1e6 : 0;
    const [root] = named("invoke_agent main");
    // The agent tool's run is named after the tool.
    const [writer] = named("invoke_agent writer_tool");
    const writes = named("execute_tool write");
    const calls = named("execute_tool writer_tool");
    // Cut off by the crash, then made again by the resume: the run ends with the second.
    expect(calls).toHaveLength(2);
    expect(end(writer)).toBe(Math.max(...calls.map(end)));
    expect(writer?.parentSpanContext?.spanId).toBe(root?.spanContext().spanId);
    expect(writes.map((span) => span.parentSpanContext?.spanId)).toEqual(
      writes.map(() => writer?.spanContext().spanId),
    );
    expect(end(writer)).toBeGreaterThanOrEqual(Math.max(...writes.map(end)));
    expect(end(writer)).toBeLessThanOrEqual(end(root));
  });

  test("a crash while its inner tool runs, that call rejected: the writer is told, its run and the root run complete, nothing is left open", async () => {
    const { store } = await crashWhileWriteRuns();
    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    second.writerModel.calls = 1;
    const paused = await resumeRun(second.main, runOptions(store, second.model));
    const { state, item } = firstInterruption(paused);
    expect(item.name).toBe("write");
    state.reject(item);
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    expect(JSON.stringify(second.writerModel.requests[0]?.input)).toMatch(/not approved/);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    const writer = inspection.runs[0]?.children ?? [];
    expect(writer.map((child) => child.status)).toEqual(["completed"]);
    expect(writer[0]?.steps[1]?.attempts.map((attempt) => attempt.status)).toEqual(["abandoned"]);
  });

  test("a crash while its inner tool runs, that call abandoned with agent-ledger resolve: it is not run or asked about again", async () => {
    const { store, first } = await crashWhileWriteRuns();
    expect(first.effects).toEqual(["write héllo 🌍"]);

    // The inner call is abandoned, as `agent-ledger resolve` does.
    const reason = "the text was written by hand";
    await abandonUnresolved(store, "write", reason);

    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    second.writerModel.calls = 1;
    const { asked, result } = await resumeApprovingAll(store, second);
    // Nobody is asked: the ledger holds the decision on write, and writer_tool runs again.
    expect(asked).toEqual([]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual([]);
    // The writer's model is told the person's reason.
    expect(JSON.stringify(second.writerModel.requests[0]?.input)).toContain(reason);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    // The writer goes on in its one child run: the abandoned call and the answer after it.
    const children = inspection.runs[0]?.children ?? [];
    expect(children.map((child) => child.status)).toEqual(["completed"]);
    expect(children[0]?.steps.map((step) => [step.kind, step.attempts.at(-1)?.status])).toEqual([
      ["model", "completed"],
      ["tool", "abandoned"],
      ["model", "completed"],
    ]);
  });

  test("a crash while its inner tool runs, the agent tool call abandoned: its agent's run is cancelled, not completed, and the write in flight inside is abandoned with it", async () => {
    const { store } = await crashWhileWriteRuns();

    // The outer call alone is abandoned, by a recorder of the person's (not `agent-ledger
    // resolve`, which settles the calls inside at once): the resume settles them.
    await abandonUnresolved(store, "writer_tool", "wrote it by hand");

    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    const result = await resumeRun(second.main, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([]);
    expect(second.writerModel.calls).toBe(0);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.status).toBe("completed");
    // The writer never finished: its run says so, not that it completed. The write it had in
    // flight will never get an outcome now: it is abandoned with the reason of the call it was
    // made in (core's settleCallsInside, as `agent-ledger resolve --abandon` does it).
    const child = inspection.runs[0]?.children[0];
    expect(child?.status).toBe("cancelled");
    expect(child?.result).toMatchObject({ reason: "wrote it by hand" });
    expect(inspection.unresolved).toEqual([]);
    const write = child?.steps.find((step) => step.kind === "tool")?.attempts;
    expect(write?.map((attempt) => [attempt.name, attempt.status, attempt.outcome])).toEqual([
      [
        "write",
        "abandoned",
        "its tool call writer_tool (call_writer) was abandoned: wrote it by hand",
      ],
    ]);
  });

  test("a ledger failure inside it leaves the root run open to resume, as anywhere else", async () => {
    const store = new FailingStore();
    let failures = 0;
    // The store is unreachable for the writer's first model request (and the recorder's two
    // retries of it), then back: a failover.
    store.failWhen = (request) =>
      request.runId !== "root" &&
      request.events.some((event) => event.type === "model.requested") &&
      ++failures <= 3;
    const first = agentToolFixture({ writeNeedsApproval: false });
    const failure = await runWithLedger(first.main, "go", runOptions(store, first.model)).catch(
      (error: unknown) => error,
    );
    expect(String(failure)).toMatch(/store is down/);
    expect(first.writerModel.calls).toBe(0);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");

    const second = agentToolFixture({ writeNeedsApproval: false });
    second.model.calls = 1;
    const { asked, result } = await resumeApprovingAll(store, second);
    // writer_tool was in flight when the run stopped, and its child run holds no call yet: that
    // run says its writer records every call it makes, so nothing inside ran unseen, and the
    // call runs again by itself, on the same child run.
    expect(asked).toEqual([]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.effects).toEqual(["write héllo 🌍"]);
    expect((await childRuns(store)).map((child) => child.status)).toEqual(["completed"]);
  });
});

describe("an agent used as a tool, called again after the run went on from a RunState", () => {
  test("a second call with the same input runs its agent on a child run of its own", async () => {
    const store = new MemoryEventStore();
    const { boss, model, researchModel } = researchFixture({ chargeBetween: true });
    const { asked, result } = await runApprovingAll(store, boss, model);
    expect(asked).toEqual(["charge"]);
    // Each call's agent asked its model: the second did not get the first's answer.
    expect(result).toMatchObject({
      status: "completed",
      finalOutput: "facts #1 on lamps | facts #2 on lamps",
    });
    expect(researchModel.calls).toBe(2);
    expect(await childRuns(store)).toEqual([
      { agent: "research", status: "completed", steps: ["model"] },
      { agent: "research", status: "completed", steps: ["model"] },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a second call with another input is not compared with the first call's run", async () => {
    const store = new MemoryEventStore();
    const { boss, model } = researchFixture({ chargeBetween: true, secondTopic: "chairs" });
    const { result } = await runApprovingAll(store, boss, model);
    expect(result).toMatchObject({
      status: "completed",
      finalOutput: "facts #1 on lamps | facts #2 on chairs",
    });
    expect((await childRuns(store)).map((child) => child.status)).toEqual([
      "completed",
      "completed",
    ]);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("completed");
  });

  test("an agent tool that pauses on each of two calls goes on, each time, on that call's child run", async () => {
    const store = new MemoryEventStore();
    const { boss, model, effects } = twoWritesFixture();
    const { asked, result } = await runApprovingAll(store, boss, model);
    expect(asked).toEqual(["write", "write"]);
    expect(result).toMatchObject({
      status: "completed",
      finalOutput: "written first | written second",
    });
    expect(effects).toEqual(["write first", "write second"]);
    expect(await childRuns(store)).toEqual([
      { agent: "writer", status: "completed", steps: ["model", "tool", "model"] },
      { agent: "writer", status: "completed", steps: ["model", "tool", "model"] },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash inside the second call's agent: resumed and approved, it goes on on that call's child run", async () => {
    // The first process dies inside research's search on "chairs" (after it searched); its
    // search on "lamps", in the first call, completed.
    const { store, first } = await ledgers.crashed(
      "research twice: dies inside the second call's search",
    );
    expect(first.effects).toEqual(["search lamps", "search chairs"]);

    const second = researchFixture({ secondTopic: "chairs", search: true });
    const { asked, result } = await resumeApprovingAll(store, {
      main: second.boss,
      model: second.model,
    });
    // The search in flight inside the research call; the research call itself runs again.
    expect(asked).toEqual(["search"]);
    expect(result).toMatchObject({ status: "completed" });
    expect(String(result.finalOutput)).toMatch(/^facts #\d on lamps \| facts #\d on chairs$/);
    expect(second.effects).toEqual(["search chairs"]);
    expect(await childRuns(store)).toEqual([
      { agent: "research", status: "completed", steps: ["model", "tool", "model"] },
      { agent: "research", status: "completed", steps: ["model", "tool", "model"] },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a ledger refusal inside an agent tool rejects with the LedgerError itself, code and all", async () => {
    const store = new FailingStore();
    // The store is unreachable for research's model requests.
    store.failWhen = (request) =>
      request.runId !== "root" && request.events.some((event) => event.type === "model.requested");
    const { boss, model, researchModel } = researchFixture();
    const failure = await runWithLedger(boss, "go", runOptions(store, model)).catch(
      (error: unknown) => error,
    );
    expect(LedgerError.isInstance(failure, "store-unavailable")).toBe(true);
    expect(researchModel.calls).toBe(0);
  });
});
