import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "./exported-spans.test.data.js";

describe("toOtelSpans invoke_agent spans", () => {
  it("carry gen_ai.provider.name and the agent's gen_ai.request.model from its first model call, an embedding aside", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "agents",
      runId: "main",
      actor: { type: "agent", id: "planner" },
    });
    await recorder.startRun();
    // An embedding first (AI SDK's ledgerEmbeddingMiddleware): not the agent's model.
    const embedding = await recorder.beforeModelCall({
      request: { operation: "embeddings", model: { provider: "cohere", modelId: "embed-v4" } },
    });
    await recorder.modelCompleted(embedding, { usage: { tokens: 3 } });
    // A provider named only in the call's metadata (LangChain's ls_provider).
    const first = await recorder.beforeModelCall({
      request: { model: "claude-sonnet-4", messages: [] },
      metadata: { provider: "anthropic" },
    });
    await recorder.modelCompleted(first, { text: "hi" });
    const second = await recorder.beforeModelCall({
      request: { model: "gpt-4o", provider: "openai", messages: [] },
    });
    await recorder.modelCompleted(second, { text: "hi" });
    // A run whose calls name no provider (a model provider of the app's own) gets none.
    const helper = recorder.child({ runId: "helper", actor: { type: "agent", id: "helper" } });
    await helper.startRun();
    const inner = await helper.beforeModelCall({ request: { model: "scripted", messages: [] } });
    await helper.modelCompleted(inner, { text: "ok" });
    await helper.completeRun("ok");
    await recorder.completeRun("done");

    const spans = await exportedSpans(store, "agents");
    const named = (name: string) => spans.find((span) => span.name === name) as ReadableSpan;
    expect(named("invoke_agent planner").attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4",
    });
    const helperSpan = named("invoke_agent helper");
    expect(helperSpan.attributes["gen_ai.request.model"]).toBe("scripted");
    expect(helperSpan.attributes["gen_ai.provider.name"]).toBeUndefined();
    // The chat spans keep their own.
    expect(named("chat gpt-4o").attributes["gen_ai.provider.name"]).toBe("openai");
  });
});
