import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { FlakyStore, payloadOf, runEvents } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "nested-session";
const RUN = "nested-run";

function script(messages: BaseMessage[]) {
  if (messages.some((message) => ToolMessage.isInstance(message))) return new AIMessage("done");
  return new AIMessage({
    content: "",
    tool_calls: [{ id: "call-lookup", name: "lookup", args: { key: "x" } }],
  });
}

/** `lookup` calls `audit` with its own config (callbacks and all), as tools commonly do. */
function tools() {
  const runs = { lookup: 0, audit: 0 };
  const audit = tool(
    async ({ what }: { what: string }) => {
      runs.audit++;
      return `audited ${what}`;
    },
    { name: "audit", description: "write", schema: z.object({ what: z.string() }) },
  );
  const lookup = tool(
    async ({ key }: { key: string }, config) => {
      runs.lookup++;
      await audit.invoke({ what: key }, config);
      return `value of ${key}`;
    },
    { name: "lookup", description: "read", schema: z.object({ key: z.string() }) },
  );
  return { runs, list: [lookup, audit] };
}

async function recordedToolCalls(store: FlakyStore) {
  const events = await runEvents(store, SESSION, RUN);
  return {
    requested: events
      .filter((event) => event.type === "tool.requested")
      .map((event) => payloadOf<{ name: string; toolCallId?: string }>(event))
      .map(({ name, toolCallId }) => ({ name, toolCallId })),
    completed: events.filter((event) => event.type === "tool.completed").length,
  };
}

describe("a tool called by another tool is recorded as a call of its own", () => {
  for (const mode of ["ledgerMiddleware", "callback only"]) {
    it(mode, async () => {
      const store = new FlakyStore();
      const { runs, list } = tools();
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const middleware = mode === "ledgerMiddleware" ? [ledgerMiddleware({ handler })] : [];
      const agent = createAgent({ model: new ScriptedChatModel(script), tools: list, middleware });
      await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { callbacks: [handler] });
      expect(runs).toEqual({ lookup: 1, audit: 1 });
      // audit is no call of the model: it has no toolCallId (LangChain hands it lookup's).
      expect(await recordedToolCalls(store)).toEqual({
        requested: [
          { name: "lookup", toolCallId: "call-lookup" },
          { name: "audit", toolCallId: undefined },
        ],
        completed: 2,
      });
    });
  }

  it("a tool that a middleware inside ledgerMiddleware runs twice is still one recorded call", async () => {
    const store = new FlakyStore();
    const { runs, list } = tools();
    const [lookup] = list;
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const twice = createMiddleware({
      name: "RunsTwice",
      wrapToolCall: async (request, next) => {
        await next(request);
        return next(request);
      },
    });
    const agent = createAgent({
      model: new ScriptedChatModel(script),
      tools: lookup ? [lookup] : [],
      middleware: [ledgerMiddleware({ handler }), twice],
    });
    await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { callbacks: [handler] });
    expect(runs.lookup).toBe(2);
    const { requested } = await recordedToolCalls(store);
    expect(requested.filter((call) => call.name === "lookup")).toEqual([
      { name: "lookup", toolCallId: "call-lookup" },
    ]);
  });
});
