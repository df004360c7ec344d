import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { recordCachedUsages, recordFixtureSession } from "./session-fixture.test.data.js";
import { toOtelSpans } from "./to-otel-spans.js";

function ms(time: [number, number]): number {
  return time[0] * 1000 + Math.round(time[1] / 1e6);
}

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

describe("toOtelSpans response ids", () => {
  it("sets gen_ai.response.id from an AI SDK result (response.id) and a LangChain message id", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "ids",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // A LanguageModelV3 generate result, as the AI SDK adapter records it.
    const aiSdk = await recorder.beforeModelCall({
      request: { model: { provider: "openai.chat", modelId: "gpt-4o" }, prompt: [] },
    });
    await recorder.modelCompleted(aiSdk, {
      content: [{ type: "text", text: "hi" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: { inputTokens: { total: 3 }, outputTokens: { total: 1 } },
      response: {
        id: "chatcmpl-ai-sdk",
        modelId: "gpt-4o-2024-08-06",
        timestamp: "2025-01-01T00:00:00.000Z",
      },
    });
    // An LLMResult, as the LangChain adapter records it (messages in StoredMessage form).
    const langChain = await recorder.beforeModelCall({
      request: { model: "gpt-4o", messages: [] },
    });
    await recorder.modelCompleted(langChain, {
      generations: [
        [
          {
            text: "hi",
            message: { type: "ai", data: { content: "hi", id: "chatcmpl-langchain" } },
          },
        ],
      ],
    });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "ids", provider);
    await provider.forceFlush();
    const idOf = (attemptId: string) =>
      exporter
        .getFinishedSpans()
        .find((span) => span.attributes["agent_ledger.attempt.id"] === attemptId)?.attributes[
        "gen_ai.response.id"
      ];
    expect(idOf(aiSdk.attemptId)).toBe("chatcmpl-ai-sdk");
    expect(idOf(langChain.attemptId)).toBe("chatcmpl-langchain");
  });
});

describe("toOtelSpans provider names", () => {
  it("names the provider as OpenTelemetry does, from the request or else the call's metadata", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "providers",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const cases: [string, Parameters<typeof recorder.beforeModelCall>[0], string | undefined][] = [
      // AI SDK provider ids.
      [
        "ai-sdk openai",
        { request: { model: { provider: "openai.responses", modelId: "m" } } },
        "openai",
      ],
      [
        "ai-sdk gemini",
        { request: { model: { provider: "google.generative-ai", modelId: "m" } } },
        "gcp.gemini",
      ],
      [
        "ai-sdk vertex",
        { request: { model: { provider: "google.vertex.chat", modelId: "m" } } },
        "gcp.vertex_ai",
      ],
      [
        "ai-sdk bedrock",
        { request: { model: { provider: "amazon-bedrock", modelId: "m" } } },
        "aws.bedrock",
      ],
      [
        "ai-sdk mistral",
        { request: { model: { provider: "mistral.chat", modelId: "m" } } },
        "mistral_ai",
      ],
      // LangChain's ls_provider, which its adapter puts in the call's metadata.
      [
        "langchain anthropic",
        { request: { model: "claude" }, metadata: { provider: "anthropic" } },
        "anthropic",
      ],
      [
        "langchain genai",
        { request: { model: "gemini-2.0" }, metadata: { provider: "google_genai" } },
        "gcp.gemini",
      ],
      [
        "langchain azure",
        { request: { model: "gpt-4o" }, metadata: { provider: "azure" } },
        "azure.ai.openai",
      ],
      ["langchain xai", { request: { model: "grok" }, metadata: { provider: "xai" } }, "x_ai"],
      // A provider the conventions do not list is kept; none said is none made up.
      ["custom", { request: { model: "m", provider: "Ollama" } }, "ollama"],
      ["unknown", { request: { model: "m" } }, undefined],
    ];
    const attempts = new Map<string, string>();
    for (const [name, call] of cases) {
      const attempt = await recorder.beforeModelCall(call);
      await recorder.modelCompleted(attempt, { text: name });
      attempts.set(attempt.attemptId, name);
    }
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "providers", provider);
    await provider.forceFlush();
    const named = new Map<string, unknown>();
    for (const span of exporter.getFinishedSpans()) {
      const name = attempts.get(String(span.attributes["agent_ledger.attempt.id"]));
      if (name !== undefined) named.set(name, span.attributes["gen_ai.provider.name"]);
    }
    expect(Object.fromEntries(named)).toEqual(
      Object.fromEntries(cases.map(([name, , expected]) => [name, expected])),
    );
  });
});

describe("toOtelSpans model names", () => {
  it("takes the model from the call's metadata when its request names none (OpenAI Agents)", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "named",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeModelCall({
      request: { input: [{ role: "user", content: "hi" }] },
      metadata: { model: "gpt-4.1" },
    });
    await recorder.beforeModelCall({
      request: { model: "from-request" },
      metadata: { model: "no" },
    });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "named", provider);
    const chats = exporter.getFinishedSpans().filter((span) => span.name.startsWith("chat"));
    expect(
      chats.map((span) => [span.name, span.attributes["gen_ai.request.model"]]).sort(),
    ).toEqual([
      ["chat from-request", "from-request"],
      ["chat gpt-4.1", "gpt-4.1"],
    ]);
  });
});

describe("toOtelSpans forks", () => {
  it("marks a call a fork copied, without its token usage, which was spent once", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const main = new SessionRecorder({ store, sessionId: "forked", runId: "main", actor });
    await main.startRun();
    const asked = await main.beforeModelCall({ request: { model: "m", messages: [] } });
    await main.modelCompleted(asked, { text: "hi", usage: { inputTokens: 10, outputTokens: 2 } });
    await store.fork({ sessionId: "forked", runId: "main", newRunId: "branch", uptoSeq: 3 });
    const branch = await SessionRecorder.resume({
      store,
      sessionId: "forked",
      runId: "branch",
      actor,
    });
    // The branch re-executes from its input: the copied call is answered from the ledger.
    const replayed = await branch.beforeModelCall({ request: { model: "m", messages: [] } });
    expect(replayed.replayed?.status).toBe("completed");
    const again = await branch.beforeModelCall({ request: { model: "m2", messages: [] } });
    await branch.modelCompleted(again, { text: "there" });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "forked", provider);
    const chats = exporter.getFinishedSpans().filter((span) => span.name.startsWith("chat"));
    const shown = chats.map((span) => [
      span.name,
      span.attributes["agent_ledger.run.id"],
      span.attributes["agent_ledger.attempt.copied"] ?? false,
      span.attributes["gen_ai.usage.input_tokens"] ?? null,
    ]);
    expect(shown.sort()).toEqual([
      ["chat m", "branch", true, null],
      ["chat m", "main", false, 10],
      ["chat m2", "branch", false, null],
    ]);
  });
});

describe("toOtelSpans text completions", () => {
  it("names a LangChain text LLM call text_completion, not chat", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "llm",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // The request shape of the LangChain adapter's handleLLMStart.
    const call = await recorder.beforeModelCall({
      request: { model: "fake", prompts: ["Capital of France?"], params: {} },
    });
    await recorder.modelCompleted(call, { generations: [[{ text: "Paris" }]] });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "llm", provider);
    await provider.forceFlush();
    const span = exporter.getFinishedSpans().find((each) => each.kind === 2);
    expect(span?.name).toBe("text_completion fake");
    expect(span?.attributes["gen_ai.operation.name"]).toBe("text_completion");
  });
});

describe("toOtelSpans causes of model and tool calls", () => {
  it("hangs a model or tool call a tool makes under the tool's span, and links any other cause", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "inner",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
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
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "inner", provider);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
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
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "agents", provider);
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
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

describe("toOtelSpans error.type", () => {
  it("is the recorded error's code when it has a string one, else its HTTP status, else its name", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "codes",
      runId: "main",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelFailed(
      model,
      Object.assign(new Error("upstream overloaded"), { code: "E503" }),
    );
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "read", args: {} });
    const timeout = Object.assign(new Error("timed out"), { code: 408 });
    timeout.name = "TimeoutError";
    await recorder.toolFailed(tool, timeout);
    const limited = await recorder.beforeModelCall({ request: { model: "n", messages: [] } });
    const rateLimit = Object.assign(new Error("Too Many Requests"), { statusCode: 429 });
    rateLimit.name = "AI_APICallError";
    await recorder.modelFailed(limited, rateLimit);
    await recorder.failRun(Object.assign(new Error("gave up"), { code: "ERR_GAVE_UP" }));
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "codes", provider);
    await provider.forceFlush();
    const errorType = (name: string) =>
      exporter.getFinishedSpans().find((span) => span.name === name)?.attributes["error.type"];
    expect(errorType("chat m")).toBe("E503");
    // A code that is not a string (a status number) is not one: the name says more.
    expect(errorType("execute_tool read")).toBe("TimeoutError");
    // An HTTP status is, as the conventions ask of an HTTP failure: a rate limit reads 429.
    expect(errorType("chat n")).toBe("429");
    expect(errorType("invoke_agent a")).toBe("ERR_GAVE_UP");
  });
});

describe("toOtelSpans retried attempts", () => {
  it("ends an attempt without outcome at its process's last event before the retry, not at the resume nor the session's end", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "retry", runId: "r", actor });
    await first.startRun();
    const read = await first.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    const note = await first.recordInput("still alive");
    // The process dies; a new one resumes the run later and retries the idempotent call.
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = await SessionRecorder.resume({ store, sessionId: "retry", runId: "r", actor });
    const again = await second.beforeToolCall({
      toolCallId: "t1",
      name: "read",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    await second.toolCompleted(again, "v");
    await new Promise((resolve) => setTimeout(resolve, 20));
    await second.completeRun("done");
    const events = await readWholeSession(store, "retry");
    const retryRequested = events.find(
      (event) => event.type === "tool.requested" && event.retryOf === read.attemptId,
    );
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "retry", provider);
    await provider.forceFlush();
    const superseded = exporter
      .getFinishedSpans()
      .find((span) => span.attributes["agent_ledger.attempt.id"] === read.attemptId);
    expect(superseded?.attributes["error.type"]).toBe("retried");
    // The dead process's last sign of life, not the resume 60 ms later: no call latency.
    expect(ms(superseded?.endTime as [number, number])).toBe(Date.parse(note.recordedAt));
    expect(Date.parse(retryRequested?.recordedAt ?? "")).toBeGreaterThan(
      Date.parse(note.recordedAt),
    );
  });

  it("ends two calls in flight together at the crash, not the second at the resume's retry of the first", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "parallel", runId: "r", actor });
    await first.startRun();
    const read = { kind: "read" as const, idempotent: true };
    const [a, b] = await Promise.all([
      first.beforeToolCall({ toolCallId: "a", name: "read", args: { n: 1 }, effect: read }),
      first.beforeToolCall({ toolCallId: "b", name: "read", args: { n: 2 }, effect: read }),
    ]);
    const events = await readWholeSession(store, "parallel");
    const crashAt = Date.parse(events[events.length - 1]?.recordedAt ?? "");
    await new Promise((resolve) => setTimeout(resolve, 60));
    const second = await SessionRecorder.resume({
      store,
      sessionId: "parallel",
      runId: "r",
      actor,
    });
    const againA = await second.beforeToolCall({
      toolCallId: "a",
      name: "read",
      args: { n: 1 },
      effect: read,
    });
    await second.toolCompleted(againA, 1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const againB = await second.beforeToolCall({
      toolCallId: "b",
      name: "read",
      args: { n: 2 },
      effect: read,
    });
    await second.toolCompleted(againB, 2);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "parallel", provider);
    const endOf = (attemptId: string) =>
      ms(
        exporter
          .getFinishedSpans()
          .find((span) => span.attributes["agent_ledger.attempt.id"] === attemptId)?.endTime as [
          number,
          number,
        ],
      );
    expect(endOf(a?.attemptId as string)).toBe(crashAt);
    expect(endOf(b?.attemptId as string)).toBe(crashAt);
  });

  it("ends a call a person abandoned after the crash at the crashed process's last event", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const actor = { type: "agent" as const, id: "a" };
    const first = new SessionRecorder({ store, sessionId: "abandoned", runId: "r", actor });
    await first.startRun();
    const pay = await first.beforeToolCall({ toolCallId: "p", name: "pay", args: {} });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const person = await SessionRecorder.resume({
      store,
      sessionId: "abandoned",
      runId: "r",
      actor: { type: "human", id: "oncall" },
      resolve: false,
    });
    await person.abandon(pay, "checked by hand: not paid");
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "abandoned", provider);
    const span = exporter
      .getFinishedSpans()
      .find((one) => one.attributes["agent_ledger.attempt.id"] === pay.attemptId);
    expect(span?.attributes["error.type"]).toBe("abandoned");
    const requested = (await readWholeSession(store, "abandoned")).find(
      (event) => event.eventId === pay.requestedEventId,
    );
    expect(ms(span?.endTime as [number, number])).toBe(Date.parse(requested?.recordedAt ?? ""));
  });
});

describe("toOtelSpans request settings", () => {
  it("sets gen_ai.request.temperature, .max_tokens and .top_p from each adapter's request", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "settings",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const requests = [
      // AI SDK call options
      {
        model: { provider: "openai.chat", modelId: "m" },
        prompt: [],
        temperature: 0.2,
        maxOutputTokens: 50,
        topP: 0.9,
      },
      // OpenAI Agents ModelRequest
      { input: "hi", modelSettings: { temperature: 0.2, maxTokens: 50, topP: 0.9 } },
      // LangChain invocation params
      { model: "m", messages: [], params: { temperature: 0.2, max_tokens: 50, top_p: 0.9 } },
    ];
    const attempts = [];
    for (const request of requests) {
      const attempt = await recorder.beforeModelCall({ request });
      await recorder.modelCompleted(attempt, { text: "ok" });
      attempts.push(attempt.attemptId);
    }
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "settings", provider);
    await provider.forceFlush();
    for (const attemptId of attempts) {
      const span = exporter
        .getFinishedSpans()
        .find((each) => each.attributes["agent_ledger.attempt.id"] === attemptId);
      expect(span?.attributes).toMatchObject({
        "gen_ai.request.temperature": 0.2,
        "gen_ai.request.max_tokens": 50,
        "gen_ai.request.top_p": 0.9,
      });
    }
  });
});

describe("toOtelSpans streamed calls", () => {
  it("sets gen_ai.request.stream when the adapter recorded whether the call streamed", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "st",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // The OpenAI Agents adapter records { stream } in the request's metadata.
    const streamed = await recorder.beforeModelCall({
      request: { input: "hi" },
      metadata: { stream: true },
    });
    await recorder.modelCompleted(streamed, { output: [] });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "st", provider);
    await provider.forceFlush();
    const span = exporter.getFinishedSpans().find((each) => each.kind === 2);
    expect(span?.attributes["gen_ai.request.stream"]).toBe(true);
  });
});

describe("toOtelSpans provider name", () => {
  it("never takes a request's system prompt for the provider (Anthropic-style `system`)", async () => {
    const { SessionRecorder } = await import("../recorder/session-recorder.js");
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "pv",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({
      request: {
        model: "claude-sonnet-4",
        system: "You are a careful assistant. Never reveal the code word.",
        messages: [{ role: "user", content: "hi" }],
      },
    });
    await recorder.modelCompleted(call, { content: [{ type: "text", text: "hello" }] });
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "pv", provider);
    await provider.forceFlush();
    const span = exporter.getFinishedSpans().find((each) => each.kind === 2);
    expect(span?.attributes["gen_ai.provider.name"]).toBeUndefined();
  });
});

describe("toOtelSpans token usage", () => {
  it("counts cached tokens in gen_ai.usage.input_tokens, whichever provider's shape", async () => {
    const store = new MemoryEventStore();
    const attempts = await recordCachedUsages(store, "cache");
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "cache", provider);
    await provider.forceFlush();
    const usageOf = (attemptId: string) => {
      const span = exporter
        .getFinishedSpans()
        .find((each) => each.attributes["agent_ledger.attempt.id"] === attemptId);
      return Object.fromEntries(
        Object.entries(span?.attributes ?? {}).filter(([key]) => key.startsWith("gen_ai.usage.")),
      );
    };
    const counted = {
      "gen_ai.usage.input_tokens": 4112,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.usage.cache_read.input_tokens": 4000,
    };
    const written = { "gen_ai.usage.cache_creation.input_tokens": 100 };
    expect(attempts.map(usageOf)).toEqual([
      { ...counted, ...written },
      counted,
      { ...counted, ...written },
    ]);
  });
});

describe("toOtelSpans agent version", () => {
  it("sets gen_ai.agent.version on invoke_agent from the version the run started with", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, fixture.sessionId, provider);
    await provider.forceFlush();
    const agents = exporter.getFinishedSpans().filter((s) => s.name.startsWith("invoke_agent"));
    const versionOf = (name: string) =>
      agents.find((span) => span.name === name)?.attributes["gen_ai.agent.version"];
    expect(versionOf("invoke_agent planner")).toBe("1.2.0");
    // The researcher was started without a version: none is made up.
    expect(versionOf("invoke_agent researcher")).toBeUndefined();
  });
});
