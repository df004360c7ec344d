import { findLedgerError } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { type createAgent, createMiddleware, toolErrorMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { FlakyStore, ledgerAgent, runEvents, threadConfig } from "./testing/helpers.js";

const SESSION = "middleware-session";
const RUN = "middleware-run";

// Turn 1: one call of `send`; turn 2: a final answer quoting the tool's message.
function script(messages: BaseMessage[]) {
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  if (results.length === 0)
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
    });
  return new AIMessage(`final: ${results.map((message) => message.content).join(" | ")}`);
}

/** A `send` tool whose SMTP server is down: it throws. */
function failingSend() {
  const calls = { count: 0 };
  const send = tool(
    async (_input: { to: string }) => {
      calls.count++;
      throw new Error("smtp is down");
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  return { send, calls };
}

/**
 * The process "dies" right after a tool call returned to LangGraph: what the ledger holds by
 * then stays, but LangGraph's write of the tool task and the next checkpoint never happen.
 */
function dieAfterToolCall(store: FlakyStore, crash: { armed: boolean }) {
  return createMiddleware({
    name: "DieAfterToolCall",
    wrapToolCall: async (request, next) => {
      try {
        return await next(request);
      } finally {
        if (crash.armed) {
          store.failing = true;
          store.failTypes = ["x.langgraph.writes", "checkpoint.saved"];
        }
      }
    },
  });
}

type Middleware = ReturnType<typeof createMiddleware>;

function agentFor(
  store: FlakyStore,
  tools: Parameters<typeof createAgent>[0]["tools"],
  middleware: (handler: LedgerCallbackHandler) => Middleware[],
) {
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: script,
    tools,
    middleware,
  });
  const config = threadConfig(handler);
  return {
    model,
    invoke: (input: Parameters<typeof agent.invoke>[0]) =>
      agent.invoke(input, config).then(
        (result) => ({ answer: String(result.messages.at(-1)?.content) }),
        (error: unknown) => ({ error: error as Error }),
      ),
  };
}

const GO = { messages: [{ role: "user", content: "go" }] };

const handToModel = (handler: LedgerCallbackHandler): Middleware[] => [
  toolErrorMiddleware({
    onError: (error) =>
      findLedgerError(error) ? undefined : `failed: ${(error as Error).message}`,
  }),
  ledgerMiddleware({ handler }),
];

describe("ledgerMiddleware: a recorded tool failure is answered on resume as it ended live", () => {
  it("a tool's own error stopped the agent live: the resumed run stops there again, without running the tool", async () => {
    const store = new FlakyStore();
    const live = failingSend();
    const first = agentFor(store, [live.send], (handler) => [ledgerMiddleware({ handler })]);
    const stopped = await first.invoke(GO);
    expect("error" in stopped && stopped.error.message).toBe("smtp is down");

    // A new process resumes the thread: the failed call is answered from the ledger.
    const resumedTool = failingSend();
    const second = agentFor(store, [resumedTool.send], (handler) => [
      ledgerMiddleware({ handler }),
    ]);
    const resumed = await second.invoke(null);
    expect(resumedTool.calls.count).toBe(0);
    expect("error" in resumed && resumed.error.message).toBe("smtp is down");
    expect(findLedgerError("error" in resumed ? resumed.error : undefined)).toBeUndefined();
    // The model is not asked to go on from an error the original run never gave it.
    expect(second.model.calls).toBe(0);
    const events = await runEvents(store, SESSION, RUN);
    expect(events.filter((event) => event.type === "tool.requested")).toHaveLength(1);
  });

  it("with toolErrorMiddleware before it, the model gets the same ToolMessage live and on resume", async () => {
    const uncrashed = new FlakyStore();
    const reference = await agentFor(uncrashed, [failingSend().send], handToModel).invoke(GO);
    expect(reference).toEqual({ answer: "final: failed: smtp is down" });

    const store = new FlakyStore();
    const crash = { armed: true };
    const first = agentFor(store, [failingSend().send], (handler) => [
      dieAfterToolCall(store, crash),
      ...handToModel(handler),
    ]);
    expect("error" in (await first.invoke(GO))).toBe(true);
    store.failing = false;
    crash.armed = false;
    const resumedTool = failingSend();
    const resumed = await agentFor(store, [resumedTool.send], handToModel).invoke(null);
    expect(resumedTool.calls.count).toBe(0);
    expect(resumed).toEqual(reference);
  });

  it("a tool called with arguments its schema rejects: live and resumed, the model is told and the agent goes on", async () => {
    const run = (store: FlakyStore, extra: Middleware[] = []) => {
      const strict = tool(async ({ to }: { to: string }) => `sent to ${to}`, {
        name: "send",
        description: "write",
        schema: z.object({ to: z.string().email() }),
      });
      return agentFor(store, [strict], (handler) => [...extra, ledgerMiddleware({ handler })]);
    };
    // The error's text holds a stack trace: the reference run goes through the same middleware.
    const uncrashed = new FlakyStore();
    const reference = await run(uncrashed, [dieAfterToolCall(uncrashed, { armed: false })]).invoke(
      GO,
    );
    expect("answer" in reference && reference.answer).toContain("Invalid email address");

    const store = new FlakyStore();
    const crash = { armed: true };
    const first = run(store, [dieAfterToolCall(store, crash)]);
    expect("error" in (await first.invoke(GO))).toBe(true);
    store.failing = false;
    crash.armed = false;
    const resumed = run(store);
    expect(await resumed.invoke(null)).toEqual(reference);
    expect(first.model.calls + resumed.model.calls).toBe(2);
  });

  it("a tool that returned an error ToolMessage: the resumed run gets that same message", async () => {
    const run = (store: FlakyStore, extra: Middleware[] = []) => {
      const refusing = tool(
        async (_input: { to: string }, config) =>
          new ToolMessage({
            content: "refused: bob is not in the address book",
            tool_call_id: config.toolCall.id,
            status: "error",
          }),
        { name: "send", description: "write", schema: z.object({ to: z.string() }) },
      );
      return agentFor(store, [refusing], (handler) => [...extra, ledgerMiddleware({ handler })]);
    };
    const reference = await run(new FlakyStore()).invoke(GO);
    expect(reference).toEqual({ answer: "final: refused: bob is not in the address book" });

    const store = new FlakyStore();
    const crash = { armed: true };
    expect("error" in (await run(store, [dieAfterToolCall(store, crash)]).invoke(GO))).toBe(true);
    store.failing = false;
    crash.armed = false;
    expect(await run(store).invoke(null)).toEqual(reference);
  });
});
