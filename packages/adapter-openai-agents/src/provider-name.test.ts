import { MemoryEventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { Agent, OpenAIResponsesModel, Runner, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai";
import { describe, expect, test } from "vitest";
import { ledgerModel } from "./index.js";

setTracingDisabled(true);

// A Responses API answer, as the server sends it.
const RESPONSE = {
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  status: "completed",
  model: "gpt-4o-2024-08-06",
  output: [
    {
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "hello", annotations: [] }],
    },
  ],
  usage: {
    input_tokens: 5,
    output_tokens: 1,
    total_tokens: 6,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
};

/**
 * A run of one agent on the SDK's own OpenAIResponsesModel, its client (the real `openai`
 * package) pointed at `baseURL` and answered offline by a fetch of our own. Returns the
 * recorded call's metadata and its span's provider name.
 */
async function runOn(baseURL: string | undefined) {
  const hosts: string[] = [];
  const client = new OpenAI({
    apiKey: "sk-test",
    ...(baseURL !== undefined ? { baseURL } : {}),
    fetch: async (url) => {
      hosts.push(new URL(String(url)).host);
      return new Response(JSON.stringify(RESPONSE), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    },
  });
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "main" },
  });
  await recorder.startRun();
  const model = ledgerModel(new OpenAIResponsesModel(client, "gpt-4o"), { recorder });
  const result = await new Runner().run(new Agent({ name: "main", model }), "hi");
  expect(result.finalOutput).toBe("hello");
  expect(hosts).toHaveLength(1);
  const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
  const requested = events.find((event) => event.type === "model.requested");
  const chat = (await exportedSpans(store, "s")).find(
    (span) => span.attributes["gen_ai.operation.name"] === "chat",
  );
  return { metadata: requested?.metadata, provider: chat?.attributes["gen_ai.provider.name"] };
}

describe("the provider of the SDK's OpenAI models", () => {
  test("api.openai.com is openai, in the call's metadata and as gen_ai.provider.name", async () => {
    const { metadata, provider } = await runOn(undefined);
    expect(metadata).toMatchObject({ model: "gpt-4o", provider: "openai" });
    expect(provider).toBe("openai");
  });

  test("an Azure OpenAI resource is azure.ai.openai", async () => {
    const { provider } = await runOn("https://contoso.openai.azure.com/openai/v1");
    expect(provider).toBe("azure.ai.openai");
  });

  test("another OpenAI-compatible server is not called OpenAI", async () => {
    const { metadata, provider } = await runOn("http://127.0.0.1:11434/v1");
    expect(metadata).not.toHaveProperty("provider");
    expect(provider).toBeUndefined();
  });
});
