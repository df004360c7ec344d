import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { recordFixtureSession, startedRecorder } from "./session-fixture.test.data.js";
import { ms } from "./span-times.test.data.js";
import { toOtelSpans } from "./to-otel-spans.js";

describe("toOtelSpans", () => {
  it("re-creates runs, chat and tool calls as GenAI spans with the recorded times", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const result = await toOtelSpans(store, fixture.sessionId, provider);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    expect(result.spanCount).toBe(spans.length);
    expect(spans.map((span) => span.name).sort()).toEqual(
      [
        "invoke_agent planner",
        "invoke_agent researcher",
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "chat gpt-4o-mini",
        "chat claude-haiku",
        "execute_tool weather",
        "execute_tool delegate",
        "execute_tool search",
        "execute_tool send_email",
      ].sort(),
    );
    const byAttr = (key: string, value: unknown) =>
      spans.filter((span) => span.attributes[key] === value);
    const one = (list: ReadableSpan[]) => {
      expect(list).toHaveLength(1);
      return list[0] as ReadableSpan;
    };
    const planner = one(
      byAttr("agent_ledger.run.id", fixture.rootRunId).filter((s) =>
        s.name.startsWith("invoke_agent"),
      ),
    );
    const researcher = one(spans.filter((s) => s.name === "invoke_agent researcher"));
    expect(result.traceIds).toEqual([planner.spanContext().traceId]);
    expect(planner.parentSpanContext).toBeUndefined();
    expect(planner.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "planner",
      "gen_ai.conversation.id": fixture.sessionId,
      "agent_ledger.run.status": "running",
    });
    expect(researcher.spanContext().traceId).toBe(planner.spanContext().traceId);

    // Every attempt span hangs under its run's span.
    for (const span of spans.filter((s) => !s.name.startsWith("invoke_agent"))) {
      const runSpan =
        span.attributes["agent_ledger.run.id"] === fixture.childRunId ? researcher : planner;
      expect(span.parentSpanContext?.spanId).toBe(runSpan.spanContext().spanId);
    }

    const chats = spans.filter((s) => s.name === "chat gpt-4o-mini");
    const failed = one(
      chats.filter((s) => s.attributes["agent_ledger.attempt.id"] === fixture.failedModelAttemptId),
    );
    expect(failed.status.code).toBe(2);
    expect(failed.attributes["error.type"]).toBe("Error");
    const asking = one(chats.filter((s) => s.attributes["gen_ai.usage.input_tokens"] === 50));
    expect(asking.kind).toBe(2); // CLIENT
    expect(asking.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.provider.name": "openai",
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.usage.cache_read.input_tokens": 10,
      "gen_ai.response.finish_reasons": ["tool-calls"],
      "agent_ledger.attempt.retry_of": fixture.failedModelAttemptId,
    });
    expect(asking.status.code).toBe(0);
    const childChat = one(spans.filter((s) => s.name === "chat claude-haiku"));
    expect(childChat.attributes).toMatchObject({
      "gen_ai.usage.input_tokens": 30,
      "gen_ai.response.model": "claude-haiku-20250101",
      "gen_ai.response.finish_reasons": ["tool_calls"],
    });

    const weather = one(spans.filter((s) => s.name === "execute_tool weather"));
    expect(weather.kind).toBe(0); // INTERNAL
    expect(weather.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "weather",
      "gen_ai.tool.call.id": "call-1",
      "agent_ledger.tool.effect": "read",
    });
    // Linked to the chat span whose completion asked for it.
    expect(weather.links.map((link) => link.context.spanId)).toEqual([asking.spanContext().spanId]);
    // The sub-agent the delegate tool call ran hangs under that call's span, as a model call a
    // tool makes does, and stays linked to it.
    const delegate = one(spans.filter((s) => s.name === "execute_tool delegate"));
    expect(researcher.parentSpanContext?.spanId).toBe(delegate.spanContext().spanId);
    expect(delegate.parentSpanContext?.spanId).toBe(planner.spanContext().spanId);
    expect(researcher.links.map((link) => link.context.spanId)).toEqual([
      delegate.spanContext().spanId,
    ]);

    const search = one(spans.filter((s) => s.name === "execute_tool search"));
    expect(search.status.code).toBe(2);
    expect(search.attributes["error.type"]).toBe("TimeoutError");

    const events = await readWholeSession(store, fixture.sessionId);
    const lastAt = Date.parse(events[events.length - 1]?.recordedAt ?? "");
    const email = one(spans.filter((s) => s.name === "execute_tool send_email"));
    expect(email.status.code).toBe(2);
    expect(email.status.message).toContain("unresolved");
    expect(email.attributes["agent_ledger.attempt.unresolved"]).toBe(true);
    expect(ms(email.endTime)).toBe(lastAt);

    // Recorded times, not the projection's clock.
    const weatherRequested = events.find(
      (e) =>
        e.type === "tool.requested" &&
        e.attemptId === weather.attributes["agent_ledger.attempt.id"],
    );
    const weatherDone = events.find(
      (e) =>
        e.type === "tool.completed" &&
        e.attemptId === weather.attributes["agent_ledger.attempt.id"],
    );
    expect(ms(weather.startTime)).toBe(Date.parse(weatherRequested?.recordedAt ?? ""));
    expect(ms(weather.endTime)).toBe(Date.parse(weatherDone?.recordedAt ?? ""));
    expect(ms(planner.startTime)).toBe(Date.parse(events[0]?.recordedAt ?? ""));
  });
});

describe("toOtelSpans causes of model and tool calls", () => {
  it("hangs a model or tool call a tool makes under the tool's span, and links any other cause", async () => {
    const { store, recorder } = await startedRecorder("inner");
    const turn = await recorder.beforeModelCall({ request: { model: "outer", messages: [] } });
    const asked = await recorder.modelCompleted(turn, { toolCalls: [{ id: "c1" }] });
    const summarize = await recorder.beforeToolCall({
      toolCallId: "c1",
      name: "summarize",
      args: {},
    });
    const inner = await recorder.beforeModelCall({
      request: { model: "inner", messages: [] },
      causedByEventId: summarize.requestedEventId,
    });
    await recorder.modelCompleted(inner, { text: "short" });
    const lookup = await recorder.beforeToolCall({
      name: "lookup",
      args: {},
      causedByEventId: summarize.requestedEventId,
    });
    await recorder.toolCompleted(lookup, "found");
    await recorder.toolCompleted(summarize, "short");
    const followUp = await recorder.beforeModelCall({
      request: { model: "followup", messages: [] },
      causedByEventId: asked.eventId,
    });
    await recorder.modelCompleted(followUp, { text: "done" });
    const spans = await exportedSpans(store, "inner");
    const named = (name: string) => spans.find((span) => span.name === name) as ReadableSpan;
    const run = named("invoke_agent a");
    const tool = named("execute_tool summarize");
    expect(named("chat inner").parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(named("chat inner").links).toEqual([]);
    // So does a tool that the tool calls; the tool the model asked for is linked to its asking.
    expect(named("execute_tool lookup").parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(named("execute_tool lookup").links).toEqual([]);
    expect(tool.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(named("chat outer").parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    const linked = named("chat followup");
    expect(linked.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(linked.links.map((link) => link.context.spanId)).toEqual([
      named("chat outer").spanContext().spanId,
    ]);
  });
});

describe("toOtelSpans runs caused by a tool call", () => {
  it("hangs a sub-agent under the tool call that ran it, and a child run without one under its parent run", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "agents",
      runId: "main",
      actor: { type: "agent", id: "planner" },
    });
    await recorder.startRun();
    const turn = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(turn, { toolCalls: [{ id: "c1" }] });
    const research = await recorder.beforeToolCall({
      toolCallId: "c1",
      name: "research",
      args: {},
    });
    const researcher = recorder.child({
      runId: "researcher",
      actor: { type: "agent", id: "researcher" },
      causedByEventId: research.requestedEventId,
    });
    await researcher.startRun();
    const inner = await researcher.beforeModelCall({ request: { model: "m", messages: [] } });
    await researcher.modelCompleted(inner, { text: "found" });
    await researcher.completeRun("found");
    await recorder.toolCompleted(research, "found");
    // A child run no tool call caused (a handoff recorded as a run of its own, say).
    const helper = recorder.child({ runId: "helper", actor: { type: "agent", id: "helper" } });
    await helper.startRun();
    await helper.completeRun("ok");
    const spans = await exportedSpans(store, "agents");
    const named = (name: string) => spans.find((span) => span.name === name) as ReadableSpan;
    const tool = named("execute_tool research");
    const sub = named("invoke_agent researcher");
    expect(sub.parentSpanContext?.spanId).toBe(tool.spanContext().spanId);
    expect(sub.links.map((link) => link.context.spanId)).toEqual([tool.spanContext().spanId]);
    expect(sub.spanContext().traceId).toBe(tool.spanContext().traceId);
    const subChat = spans.find(
      (span) => span.attributes["agent_ledger.run.id"] === "researcher" && span.kind === 2,
    );
    expect(subChat?.parentSpanContext?.spanId).toBe(sub.spanContext().spanId);
    expect(named("invoke_agent helper").parentSpanContext?.spanId).toBe(
      named("invoke_agent planner").spanContext().spanId,
    );
  });
});
