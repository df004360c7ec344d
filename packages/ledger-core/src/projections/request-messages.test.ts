import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import { requestConversation, requestMessages } from "./request-messages.js";

// OpenAI Agents input items as its ModelRequest records them: each tool call an item of its own.

const call = (callId: string, key: string): JsonValue => ({
  type: "function_call",
  callId,
  name: "lookup",
  arguments: JSON.stringify({ key }),
});
const result = (callId: string): JsonValue => ({
  type: "function_call_result",
  callId,
  name: "lookup",
  output: `value of ${callId}`,
});
const asked = (id: string, key: string) => ({ id, name: "lookup", arguments: { key } });

describe("requestConversation of OpenAI Agents input items", () => {
  it("makes consecutive function_call items one assistant message, as the model met them", () => {
    const input = [
      { type: "message", role: "user", content: "x and y?" },
      call("c1", "x"),
      call("c2", "y"),
      result("c1"),
      result("c2"),
      // A call of the next answer, after the results: a message of its own.
      call("c3", "z"),
    ];
    expect(requestConversation({ input }).messages).toEqual([
      { role: "user", content: "x and y?" },
      { role: "assistant", content: "", toolCalls: [asked("c1", "x"), asked("c2", "y")] },
      { role: "tool", content: "value of c1", toolCallId: "c1", name: "lookup" },
      { role: "tool", content: "value of c2", toolCallId: "c2", name: "lookup" },
      { role: "assistant", content: "", toolCalls: [asked("c3", "z")] },
    ]);
  });

  it("keeps an assistant message item apart from the calls after it, as the SDK sends them", () => {
    // Its chat completions converter gives the text and the calls as two assistant messages.
    const input = [
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "let me see" }],
      },
      call("c1", "x"),
      call("c2", "y"),
    ];
    expect(requestMessages({ input }).map((message) => message.toolCalls?.length ?? 0)).toEqual([
      0, 2,
    ]);
  });

  it("groups the calls of a request given as a bare list of items too", () => {
    const messages = requestConversation([call("c1", "x"), call("c2", "y")]).messages;
    expect(messages).toEqual([
      { role: "assistant", content: "", toolCalls: [asked("c1", "x"), asked("c2", "y")] },
    ]);
  });

  it("keeps a reasoning item before an assistant message item a message of its own, as the SDK does", () => {
    // agents-core types/protocol.mjs:591: the summary in `content`, the raw text in `rawContent`.
    const thought = (text: string): JsonValue => ({
      type: "reasoning",
      content: text.length > 0 ? [{ type: "input_text", text }] : [],
      rawContent: [{ type: "reasoning_text", text: "raw" }],
    });
    const input = [
      thought("say hello"),
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "hello" }] },
      // Without a summary (only encrypted content is given back): nothing to show, no message.
      thought(""),
      call("c1", "x"),
    ];
    expect(requestConversation({ input }).messages).toEqual([
      { role: "assistant", content: [{ type: "reasoning", text: "say hello" }] },
      { role: "assistant", content: [{ type: "output_text", text: "hello" }] },
      { role: "assistant", content: "", toolCalls: [asked("c1", "x")] },
    ]);
  });
});
