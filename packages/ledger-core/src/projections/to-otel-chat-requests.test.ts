import { describe, expect, it } from "vitest";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { startedRecorder } from "./session-fixture.test.data.js";

describe("toOtelSpans provider names", () => {
  it("names the provider as OpenTelemetry does, from the request or else the call's metadata", async () => {
    const { store, recorder } = await startedRecorder("providers");
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
    const spans = await exportedSpans(store, "providers");
    const named = new Map<string, unknown>();
    for (const span of spans) {
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
    const { store, recorder } = await startedRecorder("named");
    await recorder.beforeModelCall({
      request: { input: [{ role: "user", content: "hi" }] },
      metadata: { model: "gpt-4.1" },
    });
    await recorder.beforeModelCall({
      request: { model: "from-request" },
      metadata: { model: "no" },
    });
    const spans = await exportedSpans(store, "named");
    const chats = spans.filter((span) => span.name.startsWith("chat"));
    expect(
      chats.map((span) => [span.name, span.attributes["gen_ai.request.model"]]).sort(),
    ).toEqual([
      ["chat from-request", "from-request"],
      ["chat gpt-4.1", "gpt-4.1"],
    ]);
  });
});

describe("toOtelSpans text completions", () => {
  it("names a LangChain text LLM call text_completion, not chat", async () => {
    const { store, recorder } = await startedRecorder("llm");
    // The request shape of the LangChain adapter's handleLLMStart.
    const call = await recorder.beforeModelCall({
      request: { model: "fake", prompts: ["Capital of France?"], params: {} },
    });
    await recorder.modelCompleted(call, { generations: [[{ text: "Paris" }]] });
    const spans = await exportedSpans(store, "llm");
    const span = spans.find((each) => each.kind === 2);
    expect(span?.name).toBe("text_completion fake");
    expect(span?.attributes["gen_ai.operation.name"]).toBe("text_completion");
  });
});

describe("toOtelSpans request settings", () => {
  it("sets gen_ai.request.temperature, .max_tokens and .top_p from each adapter's request", async () => {
    const { store, recorder } = await startedRecorder("settings");
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
    const spans = await exportedSpans(store, "settings");
    for (const attemptId of attempts) {
      const span = spans.find((each) => each.attributes["agent_ledger.attempt.id"] === attemptId);
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
    const { store, recorder } = await startedRecorder("st");
    // The OpenAI Agents adapter records { stream } in the request's metadata.
    const streamed = await recorder.beforeModelCall({
      request: { input: "hi" },
      metadata: { stream: true },
    });
    await recorder.modelCompleted(streamed, { output: [] });
    const spans = await exportedSpans(store, "st");
    const span = spans.find((each) => each.kind === 2);
    expect(span?.attributes["gen_ai.request.stream"]).toBe(true);
  });
});

describe("toOtelSpans provider name", () => {
  it("never takes a request's system prompt for the provider (Anthropic-style `system`)", async () => {
    const { store, recorder } = await startedRecorder("pv");
    const call = await recorder.beforeModelCall({
      request: {
        model: "claude-sonnet-4",
        system: "You are a careful assistant. Never reveal the code word.",
        messages: [{ role: "user", content: "hi" }],
      },
    });
    await recorder.modelCompleted(call, { content: [{ type: "text", text: "hello" }] });
    const spans = await exportedSpans(store, "pv");
    const span = spans.find((each) => each.kind === 2);
    expect(span?.attributes["gen_ai.provider.name"]).toBeUndefined();
  });
});
