import { MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import { runEvents } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "restore-session";
const RUN = "restore-run";

/** `summarize` asks a model of its own (with its config, so that the call is traced). */
function summarizeTool() {
  const summarizer = new FakeListChatModel({ responses: ["a short summary"] });
  // Through a chain, as a summarizing chain would: the model is inside the tool all the same.
  const chain = RunnableLambda.from(async (text: string, config) =>
    summarizer.invoke(`Summarize: ${text}`, config),
  );
  return tool(
    async ({ text }: { text: string }, config) => (await chain.invoke(text, config)).content,
    {
      name: "summarize",
      description: "summarize a text",
      schema: z.object({ text: z.string() }),
    },
  );
}

function asks(...calls: { id: string; name: string; args: Record<string, unknown> }[]) {
  return new AIMessage({ content: "", tool_calls: calls });
}

/** The `model.requested` events, with the tool request each was made inside (if any). */
async function modelRequests(store: MemoryEventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const toolRequests = new Map(
    events
      .filter((event) => event.type === "tool.requested")
      .map((event) => [event.eventId, (event.payload as { name: string }).name]),
  );
  return events
    .filter((event) => event.type === "model.requested")
    .map((event) => {
      const langchain = event.metadata?.langchain as { insideTool?: string } | undefined;
      const insideTool = langchain?.insideTool;
      return insideTool === undefined ? "agent" : `inside ${toolRequests.get(insideTool)}`;
    });
}

describe("restoreMessages with a model called inside a tool", () => {
  it("rebuilds the agent's conversation, not the tool's own model call", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const config = { callbacks: [handler] };
    const model = new ScriptedChatModel(() =>
      asks(
        { id: "c1", name: "summarize", args: { text: "long doc" } },
        { id: "c2", name: "send", args: { to: "bob" } },
      ),
    );
    const ai = await model.invoke([new HumanMessage("summarize then send")], config);
    const [summarize] = ai.tool_calls ?? [];
    if (!summarize) throw new Error("expected a tool call");
    await summarizeTool().invoke({ ...summarize, type: "tool_call" }, config);
    // The process dies before `send`.

    expect(await modelRequests(store)).toEqual(["agent", "inside summarize"]);
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((message) => [message.type, message.content])).toEqual([
      ["human", "summarize then send"],
      ["ai", ""],
      ["tool", "a short summary"],
    ]);
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["c2"]);
  });

  it("under createAgent, a tool that ledgerMiddleware records is what its model call is inside", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = new ScriptedChatModel((messages: BaseMessage[]) =>
      messages.some((message) => ToolMessage.isInstance(message))
        ? new AIMessage("here is the summary")
        : asks({ id: "c1", name: "summarize", args: { text: "long doc" } }),
    );
    const agent = createAgent({
      model,
      tools: [summarizeTool()],
      middleware: [ledgerMiddleware({ handler })],
    });
    await agent.invoke(
      { messages: [{ role: "user", content: "summarize" }] },
      {
        callbacks: [handler],
      },
    );
    expect(await modelRequests(store)).toEqual(["agent", "inside summarize", "agent"]);
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
    expect(restored.messages.at(-1)?.content).toBe("here is the summary");
  });
});
