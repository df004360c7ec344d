import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toOtelSpans } from "./to-otel-spans.js";

/** A few milliseconds, so that events recorded on either side get different times. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

function ms(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

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
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  await toOtelSpans(store, "agent-tool", provider);
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const span = spans.find((each) => each.name === name);
  expect(span, name).toBeDefined();
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
