import {
  inspectSession,
  MemoryEventStore,
  messageHistory,
  runsInTreeOrder,
  toAtif,
  toOtelSpans,
} from "@agent-ledger/core";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { FakeLLM } from "@langchain/core/utils/testing";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { recordAgentRun } from "./testing/agent-run.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

describe("projections of a createAgent run", () => {
  it("OpenTelemetry names the model's provider as LangChain does (ls_provider)", async () => {
    const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
      "@opentelemetry/sdk-trace-base"
    );
    const store = await recordAgentRun();
    const exporter = new InMemorySpanExporter();
    const tracing = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    await toOtelSpans(store, "s", tracing);
    await tracing.forceFlush();
    const chats = exporter
      .getFinishedSpans()
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(chats).toHaveLength(2);
    // ScriptedChatModel names no provider of its own: LangChain's default is its class name.
    for (const span of chats)
      expect(span.attributes["gen_ai.provider.name"]).toBe("scriptedchatmodel");
  });

  it("ATIF shows the system prompt, the tool call and the tool's output text", async () => {
    const store = await recordAgentRun();
    const trajectory = await toAtif(store, "s");
    const system = trajectory.steps.find((step) => step.source === "system");
    expect(system?.message).toBe("You are terse.");
    const asking = trajectory.steps.find((step) => step.tool_calls !== undefined);
    expect(asking?.tool_calls?.map((call) => [call.tool_call_id, call.arguments])).toEqual([
      ["call-lookup", { key: "x" }],
    ]);
    expect(asking?.observation?.results).toEqual([
      { source_call_id: "call-lookup", content: "value of x" },
    ]);
    expect(trajectory.steps.at(-1)?.message).toBe("x is 42");
  });

  it("message history has the prompt's texts, the assistant's tool calls and the tool's output", async () => {
    const store = await recordAgentRun();
    const history = await messageHistory(store, { sessionId: "s" });
    expect(history).toEqual([
      { role: "system", content: [{ type: "text", text: "You are terse." }] },
      { role: "user", content: "what is x?" },
      {
        role: "assistant",
        content: "",
        name: "model", // createAgent names its model's messages after the node
        toolCalls: [{ id: "call-lookup", name: "lookup", arguments: { key: "x" } }],
      },
      { role: "tool", content: "value of x", toolCallId: "call-lookup", name: "lookup" },
      { role: "assistant", content: "x is 42" },
    ]);
  });
});

describe("inspection of a createAgent run", () => {
  it("says the tokens each model call reported (usage_metadata) and their sum", async () => {
    const store = await recordAgentRun();
    const inspection = await inspectSession(store, "s");
    const calls = runsInTreeOrder(inspection.runs)
      .flatMap(({ run }) => run.steps.flatMap((step) => step.attempts))
      .filter((attempt) => attempt.kind === "model");
    // ScriptedChatModel reports as many input tokens as the call had messages, and 3 out.
    expect(calls.map((call) => call.usage)).toEqual([
      { inputTokens: 2, outputTokens: 3 },
      { inputTokens: 4, outputTokens: 3 },
    ]);
    expect(inspection.usage).toEqual({ inputTokens: 6, outputTokens: 6 });
  });
});

describe("projections of a text LLM call", () => {
  it("ATIF shows the prompt as the user step and the completion as the agent step", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: "t", runId: "r" });
    const llm = new FakeLLM({ response: "Paris" });
    await llm.invoke("Capital of France?", { callbacks: [handler] });
    const trajectory = await toAtif(store, "t");
    expect(trajectory.steps.map((step) => [step.source, step.message])).toEqual([
      ["user", "Capital of France?"],
      ["agent", "Paris"],
    ]);
  });
});

describe("ATIF of a chat model call given files in Anthropic's content blocks", () => {
  it("names the Anthropic image and document blocks a message passes through, by their ids", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: "t", runId: "r" });
    const model = new ScriptedChatModel(() => new AIMessage("a signed contract"));
    // Uploaded with Anthropic's Files API: ChatAnthropic passes these blocks to the API as given.
    const question = new HumanMessage({
      content: [
        { type: "text", text: "is it signed?" },
        { type: "image", source: { type: "file", file_id: "file_011" } },
        { type: "document", source: { type: "file", file_id: "file_012" } },
      ],
    });
    await model.invoke([question], { callbacks: [handler] });
    const [user] = (await toAtif(store, "t")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "is it signed?" },
      { type: "text", text: "[image omitted: provider file id file_011, media type unknown]" },
      { type: "text", text: "[file omitted: provider file id file_012, media type unknown]" },
    ]);
    expect(user?.extra).toMatchObject({
      images_omitted: [{ part: 1, file_id: "file_011" }],
      files_omitted: [{ part: 2, file_id: "file_012" }],
    });
  });

  it("names the Anthropic document blocks that hold a PDF as base64 or at a URL, never copying its bytes", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: "t", runId: "r" });
    const model = new ScriptedChatModel(() => new AIMessage("both signed"));
    const pdf = Buffer.from("%PDF-1.7 contract").toString("base64");
    const question = new HumanMessage({
      content: [
        { type: "text", text: "are they signed?" },
        { type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } },
        { type: "document", source: { type: "url", url: "https://files.example/terms.pdf" } },
      ],
    });
    await model.invoke([question], { callbacks: [handler] });
    const trajectory = await toAtif(store, "t");
    const [user] = trajectory.steps;
    expect(user?.message).toEqual([
      { type: "text", text: "are they signed?" },
      { type: "text", text: "[file omitted: application/pdf, 17 bytes]" },
      { type: "text", text: "[file omitted: https://files.example/terms.pdf, media type unknown]" },
    ]);
    expect(user?.extra?.files_omitted).toMatchObject([
      { part: 1, media_type: "application/pdf", size_bytes: 17 },
      { part: 2, media_type: null, url: "https://files.example/terms.pdf" },
    ]);
    expect(JSON.stringify(trajectory)).not.toContain(pdf);
  });
});

describe("ATIF of a chat model call given files in LangChain's standard content blocks", () => {
  it("names a file or an image a block gives by a provider's file id, and shows a text file as text", async () => {
    // Each was dropped, only the message's text shown; the text file's data is text, not base64.
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: "t", runId: "r" });
    const model = new ScriptedChatModel(() => new AIMessage("all read"));
    const question = new HumanMessage({
      content: [
        { type: "text", text: "read these" },
        // v1 standard blocks, uploaded to a provider's file store.
        { type: "file", fileId: "file-pdf1", mimeType: "application/pdf" },
        { type: "image", fileId: "file-img1" },
        // v0 data blocks: by id, and a plain text file.
        { type: "file", source_type: "id", id: "file-v0" },
        { type: "file", source_type: "text", mime_type: "text/plain", data: "the terms" },
      ],
    });
    await model.invoke([question], { callbacks: [handler] });
    const [user] = (await toAtif(store, "t")).steps;
    expect(user?.message).toEqual([
      { type: "text", text: "read these" },
      { type: "text", text: "[file omitted: provider file id file-pdf1, application/pdf]" },
      { type: "text", text: "[image omitted: provider file id file-img1, media type unknown]" },
      { type: "text", text: "[file omitted: provider file id file-v0, media type unknown]" },
      { type: "text", text: "the terms" },
    ]);
    expect(user?.extra).toMatchObject({
      images_omitted: [{ part: 2, media_type: null, file_id: "file-img1" }],
      files_omitted: [
        { part: 1, media_type: "application/pdf", file_id: "file-pdf1" },
        { part: 3, media_type: null, file_id: "file-v0" },
      ],
    });
  });
});
