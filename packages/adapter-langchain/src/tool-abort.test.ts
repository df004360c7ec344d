import { inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { DynamicStructuredTool, type StructuredToolInterface, tool } from "@langchain/core/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { restoreMessages } from "./restore-messages.js";
import { ledgerAgent, runEvents, threadConfig, toolGraph } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "s1";
const RUN = "run-1";
const GO = { messages: [{ role: "user", content: "go" }] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks for `send` once, then answers with what it got. */
function askToSend(messages: BaseMessage[]) {
  const result = messages.findLast((message) => ToolMessage.isInstance(message));
  return result
    ? new AIMessage(`done: ${result.content}`)
    : new AIMessage({
        content: "",
        tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
      });
}

/**
 * A `send` that aborts the run (`controller`) once it has started, does not watch its signal, and
 * sends 50 ms later: as `tool()` builds it (LangChain rejects it at the abort, with the signal's
 * reason, and drops what it does after), or as a DynamicStructuredTool (LangChain awaits it).
 */
function abortingSend(
  kind: "tool()" | "DynamicStructuredTool",
  controller: AbortController,
  reason?: string,
) {
  const effects = { sent: 0 };
  const func = async ({ to }: { to: string }) => {
    controller.abort(reason);
    await sleep(50);
    effects.sent++;
    return `sent to ${to}`;
  };
  const fields = { name: "send", description: "write", schema: z.object({ to: z.string() }) };
  const send =
    kind === "tool()" ? tool(func, fields) : new DynamicStructuredTool({ ...fields, func });
  return { send: send as StructuredToolInterface, effects };
}

/** The send call's events, once send is done (it ends 50 ms after the abort). */
async function sendCall(store: MemoryEventStore) {
  await sleep(150);
  const events = await runEvents(store, SESSION, RUN);
  const attemptId = events.find((event) => event.type === "tool.requested")?.attemptId;
  return {
    types: events.filter((event) => event.attemptId === attemptId).map((event) => event.type),
    unresolved: (await inspectSession(store, SESSION)).unresolved.map((attempt) => attempt.name),
  };
}

/**
 * A plain graph (no ledgerMiddleware: the handler records the tool call) whose `send` aborts the
 * run: what the invocation threw, what send did, and the store.
 */
async function abortPlainGraph(kind: "tool()" | "DynamicStructuredTool", reason?: string) {
  const store = new MemoryEventStore();
  const controller = new AbortController();
  const { send, effects } = abortingSend(kind, controller, reason);
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const model = new ScriptedChatModel(askToSend);
  const graph = toolGraph(model, [send], new LedgerCheckpointSaver({ store }), {
    handleToolErrors: false,
  });
  const stopped = await graph
    .invoke(GO, { ...threadConfig(handler), signal: controller.signal })
    .catch((error: unknown) => error);
  return { store, effects, stopped };
}

describe("a tool call cut off by aborting the run, recorded by the handler (a plain graph)", () => {
  it("tool(): LangChain reports the abort as the tool's error; the call is left unresolved, not failed", async () => {
    const { store, effects, stopped } = await abortPlainGraph("tool()");
    expect((stopped as Error).name).toBe("AbortError");
    const { types, unresolved } = await sendCall(store);
    // The message went out after the abort: LangChain never reports it, the ledger cannot know.
    expect(effects.sent).toBe(1);
    expect(types).toEqual(["tool.requested"]);
    expect(unresolved).toEqual(["send"]);
    // Not given to the model as a failure (it would ask to send again): pending, for a person.
    const restored = await restoreMessages(
      store,
      { sessionId: SESSION, runId: RUN },
      { threadId: "thread-1" },
    );
    expect(restored.toolMessages).toEqual([]);
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["call-send"]);
  });

  it("tool() aborted with a text reason: recorded as the tool's failure (a limit: the README says so)", async () => {
    const { store } = await abortPlainGraph("tool()", "the user left");
    // LangChain rejects the call with `new Error("the user left")`: nothing says it is an abort.
    const { types, unresolved } = await sendCall(store);
    expect(types).toEqual(["tool.requested", "tool.failed"]);
    expect(unresolved).toEqual([]);
  });

  it("a tool LangChain awaits past the abort: its completion is recorded when it comes", async () => {
    const { store, effects, stopped } = await abortPlainGraph("DynamicStructuredTool");
    expect((stopped as Error).name).toBe("AbortError");
    const { types, unresolved } = await sendCall(store);
    expect(effects.sent).toBe(1);
    expect(types).toEqual(["tool.requested", "tool.completed"]);
    expect(unresolved).toEqual([]);
  });
});

describe("a tool call cut off by aborting the run, under createAgent with ledgerMiddleware", () => {
  it("a tool LangChain awaits past the abort: its completion is recorded when it comes", async () => {
    const store = new MemoryEventStore();
    const controller = new AbortController();
    const { send, effects } = abortingSend("DynamicStructuredTool", controller);
    const { agent, handler } = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: [send],
      answer: askToSend,
    });
    const stopped = await agent
      .invoke(GO, { ...threadConfig(handler), signal: controller.signal })
      .catch((error: unknown) => error);
    expect((stopped as Error).name).toBe("AbortError");
    const { types, unresolved } = await sendCall(store);
    expect(effects.sent).toBe(1);
    expect(types).toEqual(["tool.requested", "tool.completed"]);
    expect(unresolved).toEqual([]);
  });
});
