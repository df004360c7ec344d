import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  messageHistory,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, createMiddleware } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { payloadOf, runEvents, threadConfig } from "./testing/helpers.js";
import {
  agentWithSaver,
  RUN,
  SESSION,
  script,
  tools,
} from "./testing/nested-tool-call.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-nested-", { beforeAll, afterAll });

async function recordedToolCalls(store: EventStore) {
  const events = await runEvents(store, SESSION, RUN);
  return {
    requested: events
      .filter((event) => event.type === "tool.requested")
      .map((event) => payloadOf<{ name: string; toolCallId?: string }>(event))
      .map(({ name, toolCallId }) => ({ name, toolCallId })),
    completed: events.filter((event) => event.type === "tool.completed").length,
  };
}

/**
 * audit ran inside lookup: its cause is lookup's request, not the completion that asked for
 * lookup. So the model asked for no audit (the message history has no such tool message), and
 * audit's span hangs under lookup's.
 */
async function expectCausedByOuterCall(store: EventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const requested = (name: string) =>
    events.find(
      (event) =>
        event.type === "tool.requested" && payloadOf<{ name: string }>(event).name === name,
    );
  const lookup = requested("lookup");
  const audit = requested("audit");
  const asked = events.find((event) => event.type === "model.completed");
  expect(lookup?.causedByEventId).toBe(asked?.eventId);
  expect(audit?.causedByEventId).toBe(lookup?.eventId);
  const history = await messageHistory(store, { sessionId: SESSION, runId: RUN });
  expect(
    history.filter((message) => message.role === "tool").map((message) => message.name),
  ).toEqual(["lookup"]);
  const spans = await exportedSpans(store, SESSION);
  const span = (name: string) => spans.find((item) => item.name === `execute_tool ${name}`);
  expect(span("audit")?.parentSpanContext?.spanId).toBe(span("lookup")?.spanContext().spanId);
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
      const store = new MemoryEventStore();
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
      await expectCausedByOuterCall(store);
    });
  }

  it("a tool that a middleware inside ledgerMiddleware runs twice is still one recorded call", async () => {
    const store = new MemoryEventStore();
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

  it("a tool reached through a chain, in a crashed run, is not run again on resume", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "crash-in-lookup.db");
    // The process dies inside lookup, once audit has had its effect.
    const crashed = await crashInChild("nested-tool-call:crash-in-lookup", path);
    const crashedRuns = { lookup: crashed.count("lookup"), audit: crashed.count("audit") };
    expect(crashedRuns).toEqual({ lookup: 1, audit: 1 });

    // lookup is idempotent and runs again; the audit it already made is not repeated. The
    // ledger cannot hand audit its recorded answer: a person decides on lookup's call.
    const store = await openLedger(path, onTestFinished);
    const { runs, list } = tools({ through: "chain", runs: crashedRuns });
    const resumed = agentWithSaver(store, list);
    const error = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")?.details).toMatchObject({
      name: "lookup",
      toolCallId: "call-lookup",
      inner: { name: "audit", status: "completed" },
    });
    expect(runs).toEqual({ lookup: 2, audit: 1 });
  });

  // The sub-agent is a graph run inside the tools node (its namespace one level below it), but
  // what runs inside a tool call stays in that call's run: its tool calls with its model calls.
  for (const mode of ["ledgerMiddleware", "callback only"] as const)
    it(`a sub-agent without ledgerMiddleware that a tool runs records its tool calls in that tool's run, beside its model calls (${mode})`, async () => {
      const store = new MemoryEventStore();
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const audit = tool(async ({ what }: { what: string }) => `audited ${what}`, {
        name: "audit",
        description: "write",
        schema: z.object({ what: z.string() }),
      });
      const subAgent = createAgent({
        model: new ScriptedChatModel((messages) =>
          messages.at(-1)?.getType() === "tool"
            ? new AIMessage("audit done")
            : new AIMessage({
                content: "",
                tool_calls: [{ id: "inner-call", name: "audit", args: { what: "x" } }],
              }),
        ),
        tools: [audit],
      });
      const lookup = tool(
        async (_input, config) => {
          const done = await subAgent.invoke(
            { messages: [{ role: "user", content: "audit" }] },
            config,
          );
          return String(done.messages.at(-1)?.content);
        },
        { name: "lookup", description: "read", schema: z.object({ key: z.string() }) },
      );
      const middleware = mode === "ledgerMiddleware" ? [ledgerMiddleware({ handler })] : [];
      const agent = createAgent({
        model: new ScriptedChatModel(script),
        tools: [lookup],
        middleware,
      });
      await agent.invoke({ messages: [{ role: "user", content: "go" }] }, threadConfig(handler));
      const { runs } = await inspectSession(store, SESSION);
      expect(runs.map((run) => [run.runId, run.children.length])).toEqual([[RUN, 0]]);
      const events = await runEvents(store, SESSION, RUN);
      const auditRequested = events.find(
        (event) =>
          event.type === "tool.requested" && payloadOf<{ name: string }>(event).name === "audit",
      );
      // Asked for by the sub-agent's model, whose completion is in the same run.
      const askedAudit = events.find((event) => event.eventId === auditRequested?.causedByEventId);
      expect(askedAudit?.type).toBe("model.completed");
    });

  it("a tool that a tool runs with a tool call of its own (a sub-agent's) keeps that id", async () => {
    const store = new MemoryEventStore();
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
