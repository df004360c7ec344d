import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";
import type { ToOtelSpansOptions } from "./to-otel-spans.js";

/** The chat spans of session `sessionId`, exported with `options` (messages included). */
async function chatSpans(
  store: EventStore,
  sessionId: string,
  options: ToOtelSpansOptions = { includeMessages: true },
): Promise<ReadableSpan[]> {
  return (await exportedSpans(store, sessionId, options)).filter(
    (span) => span.attributes["gen_ai.operation.name"] === "chat",
  );
}

function parsed(span: ReadableSpan | undefined, attribute: string): JsonValue | undefined {
  const value = span?.attributes[attribute];
  return typeof value === "string" ? (JSON.parse(value) as JsonValue) : undefined;
}

async function recorded(sessionId: string) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } });
  await recorder.startRun();
  return { store, recorder };
}

/** An OpenAI Agents ModelRequest and ModelResponse, as that adapter records them. */
async function agentsCall(recorder: SessionRecorder) {
  const attempt = await recorder.beforeModelCall({
    request: {
      systemInstructions: "You are terse.",
      input: [
        { type: "message", role: "user", content: "what is x?" },
        { type: "function_call", callId: "call-1", name: "lookup", arguments: '{"key":"x"}' },
        { type: "function_call_result", callId: "call-1", name: "lookup", output: "42" },
      ],
      modelSettings: {},
      tools: [
        {
          type: "function",
          name: "lookup",
          description: "read a key",
          parameters: { type: "object", properties: { key: { type: "string" } } },
          strict: true,
        },
      ],
      handoffs: [{ toolName: "transfer_to_math", toolDescription: "math", inputJsonSchema: {} }],
      outputType: "text",
    },
  });
  await recorder.modelCompleted(attempt, {
    output: [
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "checking again" }],
      },
      { type: "function_call", callId: "call-2", name: "lookup", arguments: '{"key":"y"}' },
    ],
    usage: { inputTokens: 3, outputTokens: 2 },
  });
}

describe("toOtelSpans with includeMessages", () => {
  it("adds no message attribute unless asked, and refuses a misspelt option", async () => {
    const { store, recorder } = await recorded("off");
    await agentsCall(recorder);
    const [chat] = await chatSpans(store, "off", {});
    for (const attribute of [
      "gen_ai.input.messages",
      "gen_ai.output.messages",
      "gen_ai.system_instructions",
      "gen_ai.tool.definitions",
    ])
      expect(chat?.attributes[attribute]).toBeUndefined();
    await expect(
      exportedSpans(store, "off", { includeMessage: true } as ToOtelSpansOptions),
    ).rejects.toSatisfy((error) => LedgerError.isInstance(error, "invalid-argument"));
  });

  it("gives an OpenAI Agents call's input items, instructions, tools and answer", async () => {
    const { store, recorder } = await recorded("agents");
    await agentsCall(recorder);
    const [chat] = await chatSpans(store, "agents");
    expect(parsed(chat, "gen_ai.input.messages")).toEqual([
      { role: "user", parts: [{ type: "text", content: "what is x?" }] },
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "call-1", name: "lookup", arguments: { key: "x" } }],
      },
      { role: "tool", parts: [{ type: "tool_call_response", id: "call-1", response: "42" }] },
    ]);
    // Instructions given apart from the input are no message of it.
    expect(parsed(chat, "gen_ai.system_instructions")).toEqual([
      { type: "text", content: "You are terse." },
    ]);
    expect(parsed(chat, "gen_ai.tool.definitions")).toEqual([
      {
        type: "function",
        name: "lookup",
        description: "read a key",
        parameters: { type: "object", properties: { key: { type: "string" } } },
      },
      { type: "function", name: "transfer_to_math", description: "math", parameters: {} },
    ]);
    expect(parsed(chat, "gen_ai.output.messages")).toEqual([
      {
        role: "assistant",
        parts: [
          { type: "text", content: "checking again" },
          { type: "tool_call", id: "call-2", name: "lookup", arguments: { key: "y" } },
        ],
        // The Responses API says no finish reason: the call asked for a tool.
        finish_reason: "tool_call",
      },
    ]);
  });

  it("keeps an AI SDK prompt's system message in the messages, and names its files without their bytes", async () => {
    const { store, recorder } = await recorded("media");
    const bytes = Buffer.from("not really a png").toString("base64");
    const attempt = await recorder.beforeModelCall({
      request: {
        model: { provider: "openai.chat", modelId: "gpt-4o" },
        prompt: [
          { role: "system", content: "Be kind." },
          {
            role: "user",
            content: [
              { type: "text", text: "compare these" },
              { type: "file", mediaType: "image/png", data: "https://example.com/a.png" },
              { type: "file", mediaType: "image/png", data: bytes },
              { type: "file", mediaType: "application/pdf", data: "file-abc123" },
              { type: "file", mediaType: "audio/wav", data: "https://example.com/a.wav" },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "look closely" },
              { type: "tool-call", toolCallId: "c1", toolName: "zoom", input: { factor: 2 } },
            ],
          },
          {
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: "c1",
                toolName: "zoom",
                output: { type: "text", value: "zoomed" },
              },
            ],
          },
        ],
      },
    });
    await recorder.modelCompleted(attempt, {
      content: [{ type: "text", text: "they differ" }],
      finishReason: { unified: "stop", raw: "stop" },
    });
    const [chat] = await chatSpans(store, "media");
    expect(chat?.attributes["gen_ai.system_instructions"]).toBeUndefined();
    expect(chat?.attributes["gen_ai.tool.definitions"]).toBeUndefined();
    expect(String(chat?.attributes["gen_ai.input.messages"])).not.toContain(bytes);
    expect(parsed(chat, "gen_ai.input.messages")).toEqual([
      { role: "system", parts: [{ type: "text", content: "Be kind." }] },
      {
        role: "user",
        parts: [
          { type: "text", content: "compare these" },
          {
            type: "uri",
            modality: "image",
            mime_type: "image/png",
            uri: "https://example.com/a.png",
          },
          {
            type: "agent_ledger.blob_omitted",
            modality: "image",
            mime_type: "image/png",
            size_bytes: 16,
            event_id: attempt.requestedEventId,
          },
          {
            type: "file",
            modality: "document",
            mime_type: "application/pdf",
            file_id: "file-abc123",
          },
          {
            type: "uri",
            modality: "audio",
            mime_type: "audio/wav",
            uri: "https://example.com/a.wav",
          },
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", content: "look closely" },
          { type: "tool_call", id: "c1", name: "zoom", arguments: { factor: 2 } },
        ],
      },
      {
        role: "tool",
        // What the tool gave, not the AI SDK's output for the model wrapping it.
        parts: [{ type: "tool_call_response", id: "c1", response: "zoomed" }],
      },
    ]);
    expect(parsed(chat, "gen_ai.output.messages")).toEqual([
      {
        role: "assistant",
        parts: [{ type: "text", content: "they differ" }],
        finish_reason: "stop",
      },
    ]);
  });

  it("reads LangChain's stored messages and OpenAI-style tools, and names a tool's image without its bytes", async () => {
    const { store, recorder } = await recorded("langchain");
    const bytes = Buffer.from("a chart").toString("base64");
    const attempt = await recorder.beforeModelCall({
      request: {
        model: "gpt-4o",
        messages: [
          { type: "system", data: { content: "Be brief." } },
          {
            type: "human",
            data: {
              content: [
                { type: "text", text: "plot it" },
                { type: "image_url", image_url: { url: `data:image/png;base64,${bytes}` } },
              ],
            },
          },
          {
            type: "ai",
            data: {
              content: "",
              tool_calls: [{ id: "call-plot", name: "plot", args: { kind: "bar" } }],
            },
          },
          {
            type: "tool",
            data: {
              content: [{ type: "image", mimeType: "image/png", data: bytes }],
              tool_call_id: "call-plot",
            },
          },
        ],
        params: {
          tools: [
            {
              type: "function",
              function: { name: "plot", description: "draw", parameters: { type: "object" } },
            },
          ],
        },
      },
    });
    await recorder.modelCompleted(attempt, {
      generations: [
        [
          {
            text: "done",
            message: {
              type: "ai",
              data: { content: "done", response_metadata: { finish_reason: "stop" } },
            },
          },
        ],
      ],
    });
    const [chat] = await chatSpans(store, "langchain");
    expect(String(chat?.attributes["gen_ai.input.messages"])).not.toContain(bytes);
    const omitted = {
      type: "agent_ledger.blob_omitted",
      modality: "image",
      mime_type: "image/png",
      size_bytes: 7,
      event_id: attempt.requestedEventId,
    };
    expect(parsed(chat, "gen_ai.input.messages")).toEqual([
      { role: "system", parts: [{ type: "text", content: "Be brief." }] },
      { role: "user", parts: [{ type: "text", content: "plot it" }, omitted] },
      {
        role: "assistant",
        parts: [{ type: "tool_call", id: "call-plot", name: "plot", arguments: { kind: "bar" } }],
      },
      {
        role: "tool",
        parts: [{ type: "tool_call_response", id: "call-plot", response: [omitted] }],
      },
    ]);
    expect(parsed(chat, "gen_ai.tool.definitions")).toEqual([
      { type: "function", name: "plot", description: "draw", parameters: { type: "object" } },
    ]);
    expect(parsed(chat, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "done" }], finish_reason: "stop" },
    ]);
  });

  it("gives a failed call its input and no output", async () => {
    const { store, recorder } = await recorded("failed");
    const attempt = await recorder.beforeModelCall({
      request: { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] },
    });
    await recorder.modelFailed(attempt, { name: "APICallError", message: "overloaded" });
    const [chat] = await chatSpans(store, "failed");
    expect(parsed(chat, "gen_ai.input.messages")).toEqual([
      { role: "user", parts: [{ type: "text", content: "hi" }] },
    ]);
    expect(chat?.attributes["gen_ai.output.messages"]).toBeUndefined();
  });
});
