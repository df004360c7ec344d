import { type EventStore, findLedgerError } from "@agent-ledger/core";
import { readReports, reportToParent } from "@agent-ledger/core/testing";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { type createAgent, createMiddleware, toolErrorMiddleware } from "langchain";
import { z } from "zod";
import type { LedgerCallbackHandler } from "../callback-handler.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "middleware-session";
export const RUN = "middleware-run";

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
export function failingSend() {
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

/** A `send` tool whose schema wants an email address: the model's "bob" is rejected. */
export function strictSend() {
  return tool(async ({ to }: { to: string }) => `sent to ${to}`, {
    name: "send",
    description: "write",
    schema: z.object({ to: z.string().email() }),
  });
}

/** A `send` tool that returns an error ToolMessage rather than throwing. */
export function refusingSend() {
  return tool(
    async (_input: { to: string }, config) =>
      new ToolMessage({
        content: "refused: bob is not in the address book",
        tool_call_id: config.toolCall.id,
        status: "error",
      }),
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
}

/**
 * The process dies right after a tool call returned to LangGraph: what the ledger holds by
 * then stays, but LangGraph's write of the tool task and the next checkpoint never happen.
 * Disarmed, it only passes the call on: a run whose answer must match a crashed run's (a stack
 * trace in it lists this middleware) goes through it too.
 */
export function crashAfterToolCall(options: { armed: boolean } = { armed: true }) {
  return createMiddleware({
    name: "CrashAfterToolCall",
    wrapToolCall: async (request, next) => {
      try {
        return await next(request);
      } finally {
        if (options.armed) await crashHere();
      }
    },
  });
}

export type Middleware = ReturnType<typeof createMiddleware>;

/** One process's agent; `onModelCall` runs as each model call is paid for. */
export function agentFor(
  store: EventStore,
  tools: Parameters<typeof createAgent>[0]["tools"],
  middleware: (handler: LedgerCallbackHandler) => Middleware[],
  onModelCall?: () => void,
) {
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: (messages) => {
      onModelCall?.();
      return script(messages);
    },
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

export const GO = { messages: [{ role: "user", content: "go" }] };

export const handToModel = (handler: LedgerCallbackHandler): Middleware[] => [
  toolErrorMiddleware({
    onError: (error) =>
      findLedgerError(error) ? undefined : `failed: ${(error as Error).message}`,
  }),
  ledgerMiddleware({ handler }),
];

/** The agent with `strictSend`, behind `extra` middleware and the ledger's. */
export function invalidArgumentsAgent(
  store: EventStore,
  extra: Middleware[] = [],
  onModelCall?: () => void,
) {
  return agentFor(
    store,
    [strictSend()],
    (handler) => [...extra, ledgerMiddleware({ handler })],
    onModelCall,
  );
}

/** The agent with `refusingSend`, behind `extra` middleware and the ledger's. */
export function refusingAgent(store: EventStore, extra: Middleware[] = []) {
  return agentFor(store, [refusingSend()], (handler) => [...extra, ledgerMiddleware({ handler })]);
}

type Answer = { answer: string } | { error: unknown };

/** What a reference child's run ended with, as it reported it (an error as its JSON). */
export function answerIn(stdout: string): Answer {
  const answer = readReports<{ outcome?: Answer }>(stdout).find((report) => report.outcome);
  if (answer?.outcome === undefined) throw new Error(`no answer in: ${stdout}`);
  return answer.outcome;
}

export const ledgerMiddlewareCrashes = {
  /** toolErrorMiddleware hands send's error to the model; the process dies right after. */
  "ledger-middleware:tool-error": async (store) => {
    await agentFor(store, [failingSend().send], (handler) => [
      crashAfterToolCall(),
      ...handToModel(handler),
    ]).invoke(GO);
  },
  /** The schema rejects send's arguments; the process dies right after the call. */
  "ledger-middleware:invalid-arguments": async (store) => {
    await invalidArgumentsAgent(store, [crashAfterToolCall()], () => noteEffect("model")).invoke(
      GO,
    );
  },
  /** The same run, to its end, through the same (disarmed) middleware; prints its answer. */
  "ledger-middleware:invalid-arguments-reference": async (store) => {
    const outcome = await invalidArgumentsAgent(store, [
      crashAfterToolCall({ armed: false }),
    ]).invoke(GO);
    reportToParent({ outcome });
  },
  /** send returns an error ToolMessage; the process dies right after the call. */
  "ledger-middleware:error-message": async (store) => {
    await refusingAgent(store, [crashAfterToolCall()]).invoke(GO);
  },
} satisfies Record<string, CrashScenario>;
