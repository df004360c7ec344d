import { join } from "node:path";
import { type EventStore, MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents } from "./testing/helpers.js";
import { asks, RUN, SESSION, summarizeTool } from "./testing/restore-messages.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-restore-", { beforeAll, afterAll });

/** The `model.requested` events, with the tool request each was made inside (if any). */
async function modelRequests(store: EventStore) {
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
      // The same link as a cause, which the projections read.
      expect(event.causedByEventId).toBe(insideTool);
      return insideTool === undefined ? "agent" : `inside ${toolRequests.get(insideTool)}`;
    });
}

describe("restoreMessages with a model called inside a tool", () => {
  it("rebuilds the agent's conversation, not the tool's own model call", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "before-send.db");
    // The model asks for summarize and send; the process dies before `send`.
    await crashInChild("restore-messages:before-send", path);
    const store = await openLedger(path, onTestFinished);

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
