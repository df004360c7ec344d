import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { messageHistory } from "./message-history.js";
import { recordFixtureSession } from "./session-fixture.test.data.js";

describe("messageHistory", () => {
  it("refuses an option it does not take: `runid` answered with another run's conversation", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    await expect(
      messageHistory(store, { sessionId: fixture.sessionId, runid: "child" } as never),
    ).rejects.toMatchObject({
      code: "invalid-argument",
      path: "$.runid",
      message: expect.stringMatching(/messageHistory has no option "runid"/),
    });
  });

  it("rebuilds the conversation from the last request, its completion and tool results", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const messages = await messageHistory(store, { sessionId: fixture.sessionId });
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);
    expect(messages[0]?.content).toBe("You are helpful.");
    expect(messages[2]?.toolCalls).toEqual([
      { id: "call-1", name: "weather", arguments: { city: "Paris" } },
    ]);
    expect(messages[3]).toMatchObject({
      toolCallId: "call-1",
      name: "weather",
      content: { tempC: 18 },
    });
    expect(messages[4]).toMatchObject({
      content: "It is 18°C. I will e-mail you.",
      toolCalls: [{ id: "call-3", name: "send_email", arguments: { to: "you@example.com" } }],
    });
    expect(messages[5]).toMatchObject({ role: "tool", toolCallId: "call-3", name: "send_email" });
    expect(String(messages[5]?.content)).toContain("unresolved");
  });

  it("reads LangChain messages and OpenAI chat completions in a child run", async () => {
    const store = new MemoryEventStore();
    const fixture = await recordFixtureSession(store);
    const messages = await messageHistory(store, {
      sessionId: fixture.sessionId,
      runId: fixture.childRunId,
    });
    expect(messages).toEqual([
      { role: "user", content: "Research umbrellas" },
      {
        role: "assistant",
        content: "",
        toolCalls: [{ id: "call-s", name: "search", arguments: { q: "umbrella" } }],
      },
      { role: "tool", content: "error: search timed out", toolCallId: "call-s", name: "search" },
    ]);
  });

  it("reads OpenAI Agents requests and responses, and inputs of a run without model calls", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.recordInput("hello");
    expect(await messageHistory(store, { sessionId: "s", runId: recorder.runId })).toEqual([
      { role: "user", content: "hello" },
    ]);
    const attempt = await recorder.beforeModelCall({
      request: {
        systemInstructions: "Be brief.",
        input: [
          { role: "user", content: "hello" },
          { type: "function_call", callId: "c1", name: "now", arguments: "{}" },
          { type: "function_call_result", callId: "c1", name: "now", output: "noon" },
        ],
        modelSettings: { model: "gpt-5" },
      },
    });
    await recorder.modelCompleted(attempt, {
      usage: { inputTokens: 3, outputTokens: 2 },
      output: [
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "It is noon." }],
        },
      ],
    });
    expect(await messageHistory(store, { sessionId: "s" })).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hello" },
      { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "now", arguments: {} }] },
      { role: "tool", content: "noon", toolCallId: "c1", name: "now" },
      { role: "assistant", content: "It is noon." },
    ]);
    await expect(messageHistory(store, { sessionId: "s", runId: "missing" })).rejects.toMatchObject(
      {
        code: "not-found",
      },
    );
  });
});
