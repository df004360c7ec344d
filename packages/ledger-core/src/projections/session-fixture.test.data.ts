import { SessionRecorder } from "../recorder/session-recorder.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";

/** A recorder of an agent on a new memory store, its run started: the start of most tests here. */
export async function startedRecorder(
  sessionId: string,
): Promise<{ store: MemoryEventStore; recorder: SessionRecorder }> {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } });
  await recorder.startRun();
  return { store, recorder };
}

/** Ids of what `recordFixtureSession` wrote, for assertions. */
export interface FixtureSession {
  sessionId: string;
  rootRunId: string;
  childRunId: string;
  unresolvedAttemptId: string;
  failedModelAttemptId: string;
}

/**
 * A crashed session as adapters record it: a planner (AI SDK shaped payloads) whose first model
 * call failed and was retried, two tool calls (one handing off to a researcher child run with
 * LangChain / OpenAI shaped payloads and a failed tool), then a third model call asking to
 * send an e-mail, whose tool call stays unresolved (the process died).
 */
export async function recordFixtureSession(
  store: EventStore,
  sessionId = "fixture-session",
): Promise<FixtureSession> {
  const planner = new SessionRecorder({
    store,
    sessionId,
    runId: "run-planner",
    actor: { type: "agent", id: "planner", framework: "ai-sdk" },
  });
  await planner.startRun({ version: "1.2.0" });
  await planner.recordInput("What is the weather in Paris?");
  const request1 = {
    modelId: "gpt-4o-mini",
    provider: "openai.chat",
    prompt: [
      { role: "system", content: "You are helpful." },
      { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
    ],
    tools: [{ type: "function", name: "weather" }],
  };
  const failed = await planner.beforeModelCall({ request: request1 });
  await planner.modelFailed(failed, new Error("rate limited"));
  const retry = await planner.retry(failed);
  await planner.modelCompleted(retry, {
    content: [
      { type: "text", text: "Let me check." },
      { type: "tool-call", toolCallId: "call-1", toolName: "weather", input: '{"city":"Paris"}' },
      {
        type: "tool-call",
        toolCallId: "call-2",
        toolName: "delegate",
        input: '{"topic":"umbrellas"}',
      },
    ],
    finishReason: { unified: "tool-calls", raw: "tool_calls" },
    usage: { inputTokens: { total: 50, noCache: 40, cacheRead: 10 }, outputTokens: { total: 12 } },
  });
  const weather = await planner.beforeToolCall({
    toolCallId: "call-1",
    name: "weather",
    args: { city: "Paris" },
    effect: { kind: "read", idempotent: true },
  });
  await planner.toolCompleted(weather, { tempC: 18 });
  const delegate = await planner.beforeToolCall({
    toolCallId: "call-2",
    name: "delegate",
    args: { topic: "umbrellas" },
  });
  const researcher = planner.child({
    runId: "run-researcher",
    actor: { type: "agent", id: "researcher", framework: "langchain" },
    causedByEventId: delegate.requestedEventId,
  });
  await researcher.startRun();
  await researcher.recordInput({ topic: "umbrellas" });
  const childModel = await researcher.beforeModelCall({
    request: {
      model: "claude-haiku",
      messages: [
        [
          {
            lc: 1,
            type: "constructor",
            id: ["langchain_core", "messages", "HumanMessage"],
            kwargs: { content: "Research umbrellas" },
          },
        ],
      ],
    },
  });
  await researcher.modelCompleted(childModel, {
    model: "claude-haiku-20250101",
    choices: [
      {
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call-s",
              type: "function",
              function: { name: "search", arguments: '{"q":"umbrella"}' },
            },
          ],
        },
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: 30, completion_tokens: 5 },
  });
  const search = await researcher.beforeToolCall({
    toolCallId: "call-s",
    name: "search",
    args: { q: "umbrella" },
  });
  const timeout = new Error("search timed out");
  timeout.name = "TimeoutError";
  await researcher.toolFailed(search, timeout);
  await researcher.completeRun("Bring an umbrella.");
  await planner.toolCompleted(delegate, "Bring an umbrella.");
  const final = await planner.beforeModelCall({
    request: {
      modelId: "gpt-4o-mini",
      provider: "openai.chat",
      prompt: [
        { role: "system", content: "You are helpful." },
        { role: "user", content: [{ type: "text", text: "What is the weather in Paris?" }] },
        {
          role: "assistant",
          content: [
            {
              type: "tool-call",
              toolCallId: "call-1",
              toolName: "weather",
              input: { city: "Paris" },
            },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call-1",
              toolName: "weather",
              output: { tempC: 18 },
            },
          ],
        },
      ],
    },
  });
  await planner.modelCompleted(final, {
    text: "It is 18°C. I will e-mail you.",
    toolCalls: [{ toolCallId: "call-3", toolName: "send_email", args: { to: "you@example.com" } }],
    finishReason: "tool-calls",
    usage: { input_tokens: 80, output_tokens: 9 },
  });
  const email = await planner.beforeToolCall({
    toolCallId: "call-3",
    name: "send_email",
    args: { to: "you@example.com" },
    effect: { kind: "write", idempotent: false },
  });
  return {
    sessionId,
    rootRunId: planner.runId,
    childRunId: researcher.runId,
    unresolvedAttemptId: email.attemptId,
    failedModelAttemptId: failed.attemptId,
  };
}

/**
 * Three model calls of one 4,112-token prompt (4,000 read from the provider's cache, 100 written
 * to it), each with its provider's usage shape: Anthropic (input_tokens leaves the cached part
 * out), OpenAI (prompt_tokens has it) and the AI SDK. Returns the calls' attemptIds in order.
 */
export async function recordCachedUsages(store: EventStore, sessionId: string): Promise<string[]> {
  const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } });
  await recorder.startRun();
  const usages = [
    {
      input_tokens: 12,
      cache_read_input_tokens: 4000,
      cache_creation_input_tokens: 100,
      output_tokens: 7,
    },
    { prompt_tokens: 4112, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 4000 } },
    {
      inputTokens: { total: 4112, noCache: 12, cacheRead: 4000, cacheWrite: 100 },
      outputTokens: { total: 7 },
    },
  ];
  const attempts: string[] = [];
  for (const usage of usages) {
    const call = await recorder.beforeModelCall({ request: { model: "m", messages: [] } });
    await recorder.modelCompleted(call, { content: [{ type: "text", text: "ok" }], usage });
    attempts.push(call.attemptId);
  }
  return attempts;
}
