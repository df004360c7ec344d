import { MemoryEventStore, readWholeRun } from "@agent-ledger/core";
import {
  consumeStream,
  convertToModelMessages,
  createAgentUIStreamResponse,
  ToolLoopAgent,
  type UIMessage,
  wrapLanguageModel,
} from "ai";
import { describe, expect, it, vi } from "vitest";
import { chatTurnId } from "./chat-turn-id.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { turnRecorder } from "./testing/chat-server.test.data.js";
import { scriptedModel, textResult } from "./testing/scripted-model.test.data.js";

// A chat server on AI SDK 6's ToolLoopAgent answers with createAgentUIStreamResponse: there is
// no streamText result to call consumeStream on. A client that goes away mid-answer cancels the
// response, and the SDK then never calls the agent's onFinish: the turn's run stayed open for
// good. `consumeSseStream: consumeStream` has it read to its end (README "A chat app").

const HI: UIMessage = { id: "msg-1", role: "user", parts: [{ type: "text", text: "hi" }] };

describe("a ToolLoopAgent chat whose client goes away mid-answer", () => {
  it("is read to its end and its run closed, with consumeSseStream as the README says", async () => {
    const store = new MemoryEventStore();
    const messages = await convertToModelMessages([HI]);
    const recorder = await turnRecorder(store, "agent-chat", chatTurnId(messages));
    const { model } = scriptedModel([textResult("hello there, how can I help?")]);
    const agent = new ToolLoopAgent({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      onFinish: async ({ text }) => {
        if (recorder.status === "running") await recorder.completeRun({ text });
      },
    });
    const response = await createAgentUIStreamResponse({
      agent,
      uiMessages: [HI],
      consumeSseStream: consumeStream,
    });
    // The client reads up to the first piece of text, and the tab is closed.
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let read = "";
    while (!read.includes('"type":"text-delta"')) {
      const { done, value } = await reader.read();
      if (done) throw new Error("the answer ended before its text");
      read += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    await vi.waitFor(() => expect(recorder.status).toBe("completed"));
    const events = await readWholeRun(store, { sessionId: "agent-chat", runId: recorder.runId });
    expect(events.at(-1)).toMatchObject({
      type: "run.completed",
      payload: { output: { text: "hello there, how can I help?" } },
    });
  });
});
