import { MemoryEventStore } from "@agent-ledger/core";
import type { AIMessageChunk } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { agentFor, GO, RUN, SESSION, script, world } from "./agent.test.data.js";
import { runEvents, threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

describe("the scripted model streamed", () => {
  it("hands its tool calls as tool_call_chunks, which LangChain joins into the message's tool_calls", async () => {
    const model = new ScriptedChatModel(script);
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream("go")) chunks.push(chunk);
    // The arguments of each call come in two chunks, as a provider streams them.
    expect(chunks.filter((chunk) => chunk.tool_call_chunks?.length)).toHaveLength(4);
    const message = chunks.reduce((joined, chunk) => joined.concat(chunk));
    expect(message.tool_calls).toEqual([
      { id: "call-lookup", name: "lookup", args: { key: "x" }, type: "tool_call" },
      { id: "call-send", name: "send", args: { to: "bob" }, type: "tool_call" },
    ]);
    expect(message.usage_metadata?.output_tokens).toBe(3);
  });

  it("runs createAgent streamed by messages: the tools it asks for run once each, recorded as asked", async () => {
    const store = new MemoryEventStore();
    const { tools, effects } = world();
    const { agent, handler, model } = agentFor(store, tools);
    const streamed: string[] = [];
    for await (const [chunk] of await agent.stream(GO, {
      ...threadConfig(handler),
      streamMode: "messages",
    }))
      streamed.push(String(chunk.content));
    expect(streamed.join("")).toContain("final: value of x | sent to bob");
    expect(model.calls).toBe(2);
    expect(effects).toEqual({ lookup: 1, send: 1 });
    const events = await runEvents(store, SESSION, RUN);
    const [asked] = events.filter((event) => event.type === "model.completed");
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested.map((event) => event.causedByEventId)).toEqual([
      asked?.eventId,
      asked?.eventId,
    ]);
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(2);
  });
});
