import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { oneModelCall } from "./one-model-call.test.data.js";

// What a chat span's `gen_ai.input.messages` says a tool answered: the result itself, as the
// model met it, whatever the framework wrapped it in.

/** The input messages of the one chat span of a call whose request is `request`. */
async function inputMessages(request: JsonValue): Promise<{ messages: JsonValue; id: string }> {
  const { input, requestedEventId } = await oneModelCall(request);
  return { messages: JSON.parse(input) as JsonValue, id: requestedEventId };
}

/** An AI SDK tool message answering call `id` with `output` (a tool output for the model). */
function aiSdkToolMessage(id: string, output: JsonValue): JsonValue {
  return {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: id, toolName: "look", output }],
  };
}

const response = (id: string, answer: JsonValue) => ({
  role: "tool",
  parts: [{ type: "tool_call_response", id, response: answer }],
});

describe("toOtelSpans' tool_call_response", () => {
  it("gives what an AI SDK tool output for the model wraps, as its providers unwrap it", async () => {
    const bytes = Buffer.from("a chart").toString("base64");
    const outputs: [string, JsonValue][] = [
      ["text", { type: "text", value: "zoomed" }],
      ["json", { type: "json", value: { city: "Paris", celsius: 21 } }],
      ["json-null", { type: "json", value: null }],
      ["error-text", { type: "error-text", value: "no such city" }],
      ["error-json", { type: "error-json", value: { code: 404 } }],
      ["content", { type: "content", value: [{ type: "text", text: "seen" }] }],
      [
        "content-image",
        {
          type: "content",
          value: [
            { type: "text", text: "a chart" },
            { type: "image-data", data: bytes, mediaType: "image/png" },
          ],
        },
      ],
      ["denied", { type: "execution-denied", reason: "not today" }],
      ["denied-unsaid", { type: "execution-denied" }],
    ];
    const { messages, id } = await inputMessages({
      prompt: [
        { role: "user", content: [{ type: "text", text: "look" }] },
        ...outputs.map(([callId, output]) => aiSdkToolMessage(callId, output)),
      ],
    });
    expect(String(JSON.stringify(messages))).not.toContain(bytes);
    expect(messages).toEqual([
      { role: "user", parts: [{ type: "text", content: "look" }] },
      response("text", "zoomed"),
      response("json", { city: "Paris", celsius: 21 }),
      response("json-null", null),
      response("error-text", "no such city"),
      response("error-json", { code: 404 }),
      response("content", [{ type: "text", text: "seen" }]),
      response("content-image", [
        { type: "text", content: "a chart" },
        {
          type: "agent_ledger.blob_omitted",
          modality: "image",
          mime_type: "image/png",
          size_bytes: 7,
          event_id: id,
        },
      ]),
      response("denied", "not today"),
      response("denied-unsaid", "Tool execution denied."),
    ]);
  });

  it("gives the text of an OpenAI Agents text output, as the SDK sends it", async () => {
    const { messages } = await inputMessages({
      input: [
        {
          type: "function_call_result",
          callId: "t1",
          name: "look",
          output: { type: "text", text: "value of x" },
        },
      ],
    });
    expect(messages).toEqual([response("t1", "value of x")]);
  });

  it("keeps a result the model read as JSON as that JSON, whatever image parts it holds", async () => {
    const images = [{ type: "image", url: "https://photos.example/cat.png" }];
    const { messages } = await inputMessages({
      prompt: [aiSdkToolMessage("t1", { type: "json", value: images })],
    });
    expect(messages).toEqual([response("t1", images)]);
  });

  it("keeps a tool's own result that only looks like an output part of no known kind", async () => {
    const result = { type: "table", value: [1, 2] };
    const { messages } = await inputMessages({
      messages: [{ role: "tool", tool_call_id: "t1", content: result }],
    });
    expect(messages).toEqual([response("t1", result)]);
  });
});
