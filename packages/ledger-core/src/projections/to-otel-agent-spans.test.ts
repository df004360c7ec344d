import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import { recordFixtureSession } from "./session-fixture.test.data.js";

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

describe("toOtelSpans gen_ai.agent.id", () => {
  it("names the agent, the same for each of its runs, and keeps the run in agent_ledger.run.id", async () => {
    const store = new MemoryEventStore();
    const planner = { type: "agent" as const, id: "planner", framework: "openai-agents" };
    // Two runs of the same agent, started as the OpenAI Agents adapter starts them.
    for (const runId of ["monday", "tuesday"]) {
      const recorder = new SessionRecorder({ store, sessionId: "ids", runId, actor: planner });
      await recorder.startRun({ agent: "planner", framework: "openai-agents" });
      // A run of an agent whose start recorded an id of its own (a hosted assistant's).
      const assistant = recorder.child({ actor: { type: "agent", id: "support" } });
      await assistant.startRun({ agent: { id: "asst_5j66UpCpwteGg4YSxUnt7lPY", version: "3" } });
      await assistant.completeRun("ok");
      await recorder.completeRun("done");
    }

    const spans = await exportedSpans(store, "ids");
    const agents = spans
      .filter((span) => span.name.startsWith("invoke_agent"))
      .map((span) => [
        span.attributes["gen_ai.agent.name"],
        span.attributes["gen_ai.agent.id"],
        span.attributes["agent_ledger.run.id"],
      ]);
    expect(agents).toHaveLength(4);
    expect(agents.filter(([name]) => name === "planner").sort()).toEqual([
      ["planner", "planner", "monday"],
      ["planner", "planner", "tuesday"],
    ]);
    const support = agents.filter(([name]) => name === "support");
    expect(support.map(([, id]) => id)).toEqual([
      "asst_5j66UpCpwteGg4YSxUnt7lPY",
      "asst_5j66UpCpwteGg4YSxUnt7lPY",
    ]);
    // Each run still told apart by its run id.
    expect(new Set(support.map(([, , runId]) => runId)).size).toBe(2);
  });
});

describe("toOtelSpans agent version", () => {
  it("sets gen_ai.agent.version on invoke_agent from the version the run started with", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const spans = await exportedSpans(store, fixture.sessionId);
    const agents = spans.filter((s) => s.name.startsWith("invoke_agent"));
    const versionOf = (name: string) =>
      agents.find((span) => span.name === name)?.attributes["gen_ai.agent.version"];
    expect(versionOf("invoke_agent planner")).toBe("1.2.0");
    // The researcher was started without a version: none is made up.
    expect(versionOf("invoke_agent researcher")).toBeUndefined();
  });
});
