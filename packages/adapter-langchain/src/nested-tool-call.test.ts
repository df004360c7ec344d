import { findLedgerError } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { createAgent, createMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { FlakyStore, payloadOf, runEvents, threadConfig } from "./testing/helpers.js";
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

/**
 * `lookup` calls `audit` with its own config (callbacks and all), as tools commonly do:
 * directly, or through a chain (a RunnableLambda, as a sub-chain or retriever would).
 */
function tools(options: { through?: "direct" | "chain"; afterAudit?: () => void } = {}) {
  const runs = { lookup: 0, audit: 0 };
  const audit = tool(
    async ({ what }: { what: string }) => {
      runs.audit++;
      return `audited ${what}`;
    },
    {
      name: "audit",
      description: "write",
      schema: z.object({ what: z.string() }),
      metadata: { effect: "write" },
    },
  );
  const chain = RunnableLambda.from((what: string, config) => audit.invoke({ what }, config));
  const lookup = tool(
    async ({ key }: { key: string }, config) => {
      runs.lookup++;
      if (options.through === "chain") await chain.invoke(key, config);
      else await audit.invoke({ what: key }, config);
      options.afterAudit?.();
      return `value of ${key}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
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
  const cases = [
    { mode: "ledgerMiddleware", through: "direct" },
    { mode: "callback only", through: "direct" },
    // The chain between the tools is no tool: what counts is the running tool above it.
    { mode: "ledgerMiddleware", through: "chain" },
    { mode: "callback only", through: "chain" },
    { mode: "ledgerMiddleware", through: "chain", recordChains: false },
    { mode: "callback only", through: "chain", recordChains: false },
  ] as const;
  for (const { mode, through, ...options } of cases) {
    it(`${mode}, ${through}${"recordChains" in options ? ", recordChains: false" : ""}`, async () => {
      const store = new FlakyStore();
      const { runs, list } = tools({ through });
      const handler = new LedgerCallbackHandler({
        store,
        sessionId: SESSION,
        runId: RUN,
        ...options,
      });
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

  it("a tool reached through a chain, in a crashed run, is not run again on resume", async () => {
    const store = new FlakyStore();
    // The process "dies" inside lookup, once audit has had its effect.
    const die = () => {
      if (crashed) return;
      crashed = true;
      store.failing = true;
      throw new Error("process died");
    };
    let crashed = false;
    const { runs, list } = tools({ through: "chain", afterAudit: die });
    const agentFor = () => {
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const agent = createAgent({
        model: new ScriptedChatModel(script),
        tools: list,
        middleware: [ledgerMiddleware({ handler })],
        checkpointer: new LedgerCheckpointSaver({ store }),
      });
      return { handler, agent };
    };
    const first = agentFor();
    await expect(
      first.agent.invoke(
        { messages: [{ role: "user", content: "go" }] },
        threadConfig(first.handler),
      ),
    ).rejects.toThrow();
    store.failing = false;
    expect(runs).toEqual({ lookup: 1, audit: 1 });

    // lookup is idempotent and runs again; the audit it already made is not repeated.
    const resumed = agentFor();
    const error = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")?.details).toMatchObject({
      name: "audit",
      toolCallId: null,
    });
    expect(runs).toEqual({ lookup: 2, audit: 1 });
  });

  it("a tool that a tool runs with a tool call of its own (a sub-agent's) keeps that id", async () => {
    const store = new FlakyStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const audit = tool(async ({ what }: { what: string }) => `audited ${what}`, {
      name: "audit",
      description: "write",
      schema: z.object({ what: z.string() }),
    });
    const lookup = tool(
      async ({ key }: { key: string }, config) => {
        const call = { id: "inner-call", name: "audit", args: { what: key } };
        await audit.invoke({ ...call, type: "tool_call" }, config);
        return `value of ${key}`;
      },
      { name: "lookup", description: "read", schema: z.object({ key: z.string() }) },
    );
    const agent = createAgent({
      model: new ScriptedChatModel(script),
      tools: [lookup],
      middleware: [ledgerMiddleware({ handler })],
    });
    await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { callbacks: [handler] });
    expect((await recordedToolCalls(store)).requested).toEqual([
      { name: "lookup", toolCallId: "call-lookup" },
      { name: "audit", toolCallId: "inner-call" },
    ]);
  });
});
