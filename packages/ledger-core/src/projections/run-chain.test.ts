import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import type { NewEvent } from "../events/types.js";
import { inspectSession, type RunView } from "../inspect/inspect-session.js";
import { madeAgainByItself } from "../inspect/made-again.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { recordHandoffChain } from "../testing/handoff-chain.js";
import type { AtifTrajectory } from "./atif-types.js";
import { toAtif } from "./to-atif.js";
import { toOtelSpans } from "./to-otel-spans.js";

// Every walk over the run tree is a loop: a call per level overflowed the stack at a chain of
// about 1,000 child runs (toAtif) or 2,000 (inspectSession).
const DEPTH = 5000;

/**
 * A session of DEPTH runs, each the child of the one before, started by its tool call (a handoff
 * after a handoff), each call still in flight: the chain crashed. The root then paused, naming
 * the call it waits on; a decision is an `x.decided` event (its `endedBy`).
 */
async function recordChain(store: MemoryEventStore): Promise<void> {
  const root = await recordHandoffChain(store, "chain", DEPTH);
  await root.checkpoint({
    awaitingDecision: { calls: [{ name: "hand_off", toolCallId: "c0" }], endedBy: ["x.decided"] },
  });
}

describe(`a chain of ${DEPTH} child runs`, () => {
  it("is inspected whole: the tree as deep as the chain, every call in flight, the root's pause", async () => {
    const store = new MemoryEventStore();
    await recordChain(store);
    const inspection = await inspectSession(store, "chain");
    expect(inspection.unresolved).toHaveLength(DEPTH);
    expect(inspection.runs).toHaveLength(1);
    let run = inspection.runs[0] as RunView;
    expect(run.awaitingDecision?.calls).toEqual([{ name: "hand_off", toolCallId: "c0" }]);
    for (let index = 1; index < DEPTH; index++) {
      expect(run.children).toHaveLength(1);
      const child = run.children[0] as RunView;
      expect(child.runId).toBe(`r${index}`);
      expect(child.causedByEventId).toBe(run.steps[0]?.attempts[0]?.requestEventId);
      run = child;
    }
    expect(run.children).toEqual([]);
    // Every call is a write nobody declared idempotent, inside no call that ended: to decide.
    expect(madeAgainByItself(inspection).filter(Boolean)).toHaveLength(0);
  });

  it("projects to ATIF: each run's trajectory embedded in its parent's, referenced from the call that started it", async () => {
    const store = new MemoryEventStore();
    await recordChain(store);
    let trajectory = await toAtif(store, "chain");
    for (let index = 0; index < DEPTH - 1; index++) {
      expect(trajectory.trajectory_id).toBe(`r${index}`);
      const [result] = trajectory.steps[0]?.observation?.results ?? [];
      expect(result?.source_call_id).toBe(`c${index}`);
      expect(result?.subagent_trajectory_ref).toEqual([
        { trajectory_id: `r${index + 1}`, session_id: "chain" },
      ]);
      expect(trajectory.subagent_trajectories).toHaveLength(1);
      trajectory = trajectory.subagent_trajectories?.[0] as AtifTrajectory;
    }
    expect(trajectory.trajectory_id).toBe(`r${DEPTH - 1}`);
    expect(trajectory.subagent_trajectories).toBeUndefined();
  });

  it("projects to OpenTelemetry: each run's span under the tool call span that started it", async () => {
    const store = new MemoryEventStore();
    await recordChain(store);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const result = await toOtelSpans(store, "chain", provider);
    await provider.forceFlush();
    expect(result.spanCount).toBe(2 * DEPTH);
    expect(result.traceIds).toHaveLength(1);
    const spans = exporter.getFinishedSpans();
    const byId = new Map(spans.map((span) => [span.spanContext().spanId, span]));
    const deepest = spans.find(
      (span) => span.attributes["gen_ai.tool.call.id"] === `c${DEPTH - 1}`,
    );
    // From the deepest call up to the root run: a tool span and a run span a level.
    let hops = 0;
    for (let span = deepest; span?.parentSpanContext !== undefined; hops++)
      span = byId.get(span.parentSpanContext.spanId);
    expect(hops).toBe(2 * DEPTH - 1);
    await provider.shutdown();
  });

  it("projects to OpenTelemetry runs committed before their parents, and parents that name each other", async () => {
    const store = new MemoryEventStore();
    const started = (parentRunId?: string): NewEvent => ({
      type: "run.started",
      actor: { type: "agent", id: "a" },
      payload: {},
      ...(parentRunId === undefined ? {} : { parentRunId }),
    });
    // Written by hand, deepest first: each run's span is made with its ancestors'.
    for (let index = DEPTH - 1; index >= 0; index--)
      await store.append({
        sessionId: "reversed",
        runId: `r${index}`,
        expectedSeq: 0,
        events: [started(index === 0 ? undefined : `r${index - 1}`)],
      });
    await store.append({ sessionId: "circle", runId: "a", expectedSeq: 0, events: [started("b")] });
    await store.append({ sessionId: "circle", runId: "b", expectedSeq: 0, events: [started("a")] });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    expect(await toOtelSpans(store, "reversed", provider)).toMatchObject({ spanCount: DEPTH });
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    const byRun = new Map(spans.map((span) => [span.attributes["agent_ledger.run.id"], span]));
    for (let index = 1; index < DEPTH; index++)
      expect(byRun.get(`r${index}`)?.parentSpanContext?.spanId).toBe(
        byRun.get(`r${index - 1}`)?.spanContext().spanId,
      );
    // In a circle, the run that closes it hangs under none: one trace, no endless climb.
    exporter.reset();
    const circle = await toOtelSpans(store, "circle", provider);
    expect(circle).toMatchObject({ spanCount: 2 });
    expect(circle.traceIds).toHaveLength(1);
    await provider.shutdown();
  });
});
