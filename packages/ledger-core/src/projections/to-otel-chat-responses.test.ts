import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { recordCachedUsages, startedRecorder } from "./session-fixture.test.data.js";

describe("toOtelSpans response ids", () => {
  it("sets gen_ai.response.id from an AI SDK result (response.id) and a LangChain message id", async () => {
    const { store, recorder } = await startedRecorder("ids");
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
    const spans = await exportedSpans(store, "ids");
    const idOf = (attemptId: string) =>
      spans.find((span) => span.attributes["agent_ledger.attempt.id"] === attemptId)?.attributes[
        "gen_ai.response.id"
      ];
    expect(idOf(aiSdk.attemptId)).toBe("chatcmpl-ai-sdk");
    expect(idOf(langChain.attemptId)).toBe("chatcmpl-langchain");
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
    const spans = await exportedSpans(store, "forked");
    const chats = spans.filter((span) => span.name.startsWith("chat"));
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

describe("toOtelSpans token usage", () => {
  it("counts cached tokens in gen_ai.usage.input_tokens, whichever provider's shape", async () => {
    const store = new MemoryEventStore();
    const attempts = await recordCachedUsages(store, "cache");
    const spans = await exportedSpans(store, "cache");
    const usageOf = (attemptId: string) => {
      const span = spans.find((each) => each.attributes["agent_ledger.attempt.id"] === attemptId);
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
