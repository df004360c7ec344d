import { MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { runEvents, threadConfig, toolGraph } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

describe("a plain LangGraph graph", () => {
  it("a tool that pauses at interrupt() runs again when a new process resumes it (callback only)", async () => {
    const store = new MemoryEventStore();
    let sent = 0;
    const send = tool(
      async ({ to }: { to: string }) => {
        if (interrupt({ question: `send to ${to}?` }) !== "yes") return "not sent";
        sent++;
        return `sent to ${to}`;
      },
      { name: "send", description: "write", schema: z.object({ to: z.string() }) },
    );
    const model = () =>
      new ScriptedChatModel((messages: BaseMessage[]) =>
        messages.some((message) => ToolMessage.isInstance(message))
          ? new AIMessage(`done: ${String(messages.at(-1)?.content)}`)
          : new AIMessage({
              content: "",
              tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
            }),
      );
    const config = (handler: LedgerCallbackHandler) => threadConfig(handler, "interrupted");
    const handler = () => new LedgerCallbackHandler({ store, sessionId: "graph", runId: "hitl" });
    const first = handler();
    await toolGraph(model(), [send], new LedgerCheckpointSaver({ store })).invoke(
      { messages: [new HumanMessage("send it")] },
      config(first),
    );
    expect(sent).toBe(0);
    const second = handler();
    const result = await toolGraph(model(), [send], new LedgerCheckpointSaver({ store })).invoke(
      new Command({ resume: "yes" }),
      config(second),
    );
    expect(sent).toBe(1);
    expect(result.messages.at(-1)?.content).toBe("done: sent to bob");
  });

  it("records model calls, tool calls and graph nodes, with checkpoints in the ledger", async () => {
    const store = new MemoryEventStore();
    const add = tool(async ({ a, b }: { a: number; b: number }) => String(a + b), {
      name: "add",
      description: "add",
      schema: z.object({ a: z.number(), b: z.number() }),
    });
    const model = new ScriptedChatModel((messages: BaseMessage[]) =>
      messages.some((message) => ToolMessage.isInstance(message))
        ? new AIMessage(`sum is ${String(messages.at(-1)?.content)}`)
        : new AIMessage({
            content: "",
            tool_calls: [{ id: "call-add", name: "add", args: { a: 2, b: 3 } }],
          }),
    );
    const graph = toolGraph(model, [add], new LedgerCheckpointSaver({ store }));
    const handler = new LedgerCallbackHandler({ store, sessionId: "graph", runId: "graph-run" });
    const result = await graph.invoke(
      { messages: [new HumanMessage("2+3?")] },
      threadConfig(handler, "g1"),
    );
    expect(result.messages.at(-1)?.content).toBe("sum is 5");
    const events = await runEvents(store, "graph", "graph-run");
    const types = events.map((event) => event.type).filter((type) => !type.startsWith("x."));
    expect(types).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested",
      "model.completed",
    ]);
    const toolRequested = events.find((event) => event.type === "tool.requested");
    expect(toolRequested?.causedByEventId).toBe(
      events.find((event) => event.type === "model.completed")?.eventId,
    );
    const nodes = events
      .filter((event) => event.type === "x.langchain.chain.started")
      .map((event) => (event.payload as { node?: string }).node);
    expect(nodes.filter((node) => node === "agent")).toHaveLength(2);
    expect(nodes.filter((node) => node === "tools")).toHaveLength(1);
    const saver = new LedgerCheckpointSaver({ store });
    const latest = await saver.getTuple({ configurable: { thread_id: "g1" } });
    expect((latest?.checkpoint.channel_values.messages as BaseMessage[] | undefined)?.length).toBe(
      4,
    );
  });
});
