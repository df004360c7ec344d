import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { ms } from "./span-times.test.data.js";

/** A few milliseconds, so that events recorded on either side get different times. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/**
 * A planner whose tool call `research` runs a researcher agent on a child run (an agent used as
 * a tool), recorded as the OpenAI Agents adapter does: the call's outcome first, then the child
 * run's end (`closeChild`), after a moment.
 */
async function agentToolSession(
  closeChild: (researcher: SessionRecorder, recorder: SessionRecorder) => Promise<void>,
  outcome: (
    recorder: SessionRecorder,
    call: Awaited<ReturnType<SessionRecorder["beforeToolCall"]>>,
  ) => Promise<unknown> = (recorder, call) => recorder.toolCompleted(call, "found"),
): Promise<ReadableSpan[]> {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "agent-tool",
    runId: "main",
    actor: { type: "agent", id: "planner" },
  });
  await recorder.startRun();
  const turn = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
  await recorder.modelCompleted(turn, { toolCalls: [{ id: "c1", name: "research" }] });
  const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "research", args: {} });
  const researcher = recorder.child({
    runId: "researcher",
    actor: { type: "agent", id: "researcher" },
    causedByEventId: call.requestedEventId,
  });
  await researcher.startRun();
  const inner = await researcher.beforeModelCall({ request: { model: "m", messages: [] } });
  await researcher.modelCompleted(inner, { text: "found" });
  await tick();
  await outcome(recorder, call);
  await tick();
  await closeChild(researcher, recorder);
  return exportedSpans(store, "agent-tool");
}

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((each) => each.name === name);
  expect(span, name).toBeDefined();
  return span as ReadableSpan;
}

function attemptSpan(spans: ReadableSpan[], attemptId: string): ReadableSpan {
  const span = spans.find((each) => each.attributes["agent_ledger.attempt.id"] === attemptId);
  expect(span, attemptId).toBeDefined();
  return span as ReadableSpan;
}

describe("toOtelSpans: the run of an agent used as a tool ends within the tool call's span", () => {
  it("ends with the call when the run's end was recorded after the call's outcome", async () => {
    const spans = await agentToolSession(async (researcher, recorder) => {
      await researcher.completeRun("found");
      await tick();
      await recorder.completeRun("done");
    });
    const tool = named(spans, "execute_tool research");
    const sub = named(spans, "invoke_agent researcher");
    expect(sub.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    // It ended past its parent's end, by the time the adapter took to close the run.
    expect(ms(sub.endTime)).toBe(ms(tool.endTime));
    expect(sub.attributes["agent_ledger.run.status"]).toBe("completed");
    expect(ms(sub.startTime)).toBeLessThanOrEqual(ms(sub.endTime));
  });

  it("ends with the call, not at the session's end, when a crash left the run open after the call answered", async () => {
    const spans = await agentToolSession(async (_researcher, recorder) => {
      const next = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
      await tick();
      await recorder.modelCompleted(next, { text: "done" });
    });
    const tool = named(spans, "execute_tool research");
    const sub = named(spans, "invoke_agent researcher");
    expect(sub.attributes["agent_ledger.run.status"]).toBe("running");
    expect(ms(sub.endTime)).toBe(ms(tool.endTime));
    const main = named(spans, "invoke_agent planner");
    expect(ms(sub.endTime)).toBeLessThan(ms(main.endTime));
  });

  it("ends at the run's last event when its agent went on after the call failed (a timeout)", async () => {
    let lastInner = 0;
    const spans = await agentToolSession(
      async (researcher) => {
        const late = await researcher.beforeModelCall({ request: { model: "m", messages: [] } });
        await researcher.modelCompleted(late, { text: "late" });
        lastInner = Date.now();
        await tick();
        await researcher.failRun(new Error("the call timed out"));
      },
      (recorder, call) => recorder.toolFailed(call, new Error("timed out")),
    );
    const tool = named(spans, "execute_tool research");
    const sub = named(spans, "invoke_agent researcher");
    expect(ms(sub.endTime)).toBeGreaterThan(ms(tool.endTime));
    expect(ms(sub.endTime)).toBeLessThanOrEqual(lastInner);
    expect(sub.status.code).toBe(2);
  });
});

describe("toOtelSpans: the run of an agent used as a tool that a resume picked up again", () => {
  it("covers its resumed work and stays inside its parent: under the run's span, linked to both attempts of the call", async () => {
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "planner" };
    const researcherActor = { type: "agent" as const, id: "researcher" };
    const effect = { kind: "read" as const, idempotent: true };
    const ask = { toolCallId: "c1", name: "research", args: {}, effect };
    const first = { request: { model: "m", messages: [] } };
    const second = { request: { model: "m", messages: [{ role: "user", content: "more" }] } };
    // The first process: the researcher's second model call is in flight when it is killed.
    const recorder = new SessionRecorder({ store, sessionId: "resumed", runId: "main", actor });
    await recorder.startRun();
    const call = await recorder.beforeToolCall(ask);
    const researcher = recorder.child({
      actor: researcherActor,
      causedByEventId: call.requestedEventId,
    });
    await researcher.startRun();
    await tick();
    await researcher.modelCompleted(await researcher.beforeModelCall(first), { text: "half" });
    await researcher.beforeModelCall(second);
    await tick();
    // The resume makes the call again; the researcher's run, adopted, goes on under it.
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "resumed",
      runId: "main",
      actor,
    });
    const again = await resumed.beforeToolCall(ask);
    const adopted = resumed.child({
      actor: researcherActor,
      causedByEventId: again.requestedEventId,
    });
    await adopted.startRun();
    expect(adopted.runId).toBe(researcher.runId);
    await adopted.beforeModelCall(first);
    const made = await adopted.beforeModelCall(second);
    await tick();
    await adopted.modelCompleted(made, { text: "done" });
    await tick();
    await resumed.toolCompleted(again, "found");
    await tick();
    await adopted.completeRun("found");
    await resumed.completeRun("ok");

    const spans = await exportedSpans(store, "resumed");
    const spanOf = (attemptId: string) => attemptSpan(spans, attemptId);
    const main = named(spans, "invoke_agent planner");
    const sub = named(spans, "invoke_agent researcher");
    const crashed = spanOf(call.attemptId);
    const retry = spanOf(again.attemptId);
    // Under the crashed call's span, it overran that span by the whole resume.
    expect(sub.parentSpanContext?.spanId).toBe(main.spanContext().spanId);
    expect(ms(sub.startTime)).toBeLessThan(ms(crashed.endTime));
    // It covers the resumed work and ends with the call made again, as an unbroken one does.
    const resumedWork = spanOf(made.attemptId);
    expect(resumedWork.parentSpanContext?.spanId).toBe(sub.spanContext().spanId);
    expect(ms(sub.endTime)).toBeGreaterThanOrEqual(ms(resumedWork.endTime));
    expect(ms(sub.endTime)).toBe(ms(retry.endTime));
    expect(ms(sub.endTime)).toBeLessThanOrEqual(ms(main.endTime));
    const linkTypes = (span: ReadableSpan) =>
      span.links.map((link) => [link.context.spanId, link.attributes?.["agent_ledger.link.type"]]);
    expect(linkTypes(sub)).toEqual([[crashed.spanContext().spanId, "caused_by"]]);
    expect(linkTypes(retry)).toContainEqual([sub.spanContext().spanId, "resumes"]);
  });
});

describe("toOtelSpans: calls a crash cut off, decided by a person, made again by a resume", () => {
  it("end at the crashed process's last event, in the runs their calls made, not at the person's approval", async () => {
    const store = new MemoryEventStore();
    const agent = { type: "agent" as const, id: "editor" };
    const none = { kind: "none" as const, idempotent: true };
    const write = { kind: "write" as const, idempotent: false };
    // The first process: the editor's agent tool call runs a writer on a child run, whose
    // publish call is in flight when the process is killed.
    const editor = new SessionRecorder({
      store,
      sessionId: "crash",
      runId: "editor",
      actor: agent,
    });
    await editor.startRun();
    const writerCall = await editor.beforeToolCall({
      toolCallId: "w",
      name: "writer_tool",
      args: {},
      effect: none,
    });
    await tick();
    const writer = editor.child({
      runId: "writer",
      actor: { type: "agent", id: "writer" },
      causedByEventId: writerCall.requestedEventId,
    });
    await writer.startRun();
    const publish = await writer.beforeToolCall({
      toolCallId: "p",
      name: "publish",
      args: {},
      effect: write,
    });
    const crashAt = Date.now();
    await tick();
    // A person approves publish again (agent-ledger resolve --approve), a while later.
    const person = await SessionRecorder.resume({
      store,
      sessionId: "crash",
      runId: "writer",
      actor: { type: "human", id: "oncall" },
      resolve: false,
    });
    await person.approve(publish, "not published");
    await tick();
    // The resume makes both calls again.
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "crash",
      runId: "editor",
      actor: agent,
    });
    const writerAgain = await resumed.beforeToolCall({
      toolCallId: "w",
      name: "writer_tool",
      args: {},
      effect: none,
    });
    const resumedWriter = await SessionRecorder.resume({
      store,
      sessionId: "crash",
      runId: "writer",
      actor: { type: "agent", id: "writer" },
    });
    const publishAgain = await resumedWriter.beforeToolCall({
      toolCallId: "p",
      name: "publish",
      args: {},
      effect: write,
    });
    expect(publishAgain.attemptId).not.toBe(publish.attemptId);
    await resumedWriter.toolCompleted(publishAgain, "published");
    await resumed.toolCompleted(writerAgain, "written");

    const spans = await exportedSpans(store, "crash");
    const spanOf = (attemptId: string) => attemptSpan(spans, attemptId);
    const events = await readWholeSession(store, "crash");
    const recordedAt = (eventId: string) =>
      Date.parse(events.find((event) => event.eventId === eventId)?.recordedAt ?? "");
    // Killed right after it was requested: not 10 ms later, at the approval.
    const cutOff = spanOf(publish.attemptId);
    expect(cutOff.attributes["error.type"]).toBe("retried");
    expect(ms(cutOff.endTime)).toBe(recordedAt(publish.requestedEventId));
    // The agent tool call lived as long as the calls made inside it: to the same moment.
    const outer = spanOf(writerCall.attemptId);
    expect(ms(outer.endTime)).toBe(recordedAt(publish.requestedEventId));
    expect(ms(outer.endTime)).toBeLessThanOrEqual(crashAt);
  });
});
