import type { EventStore, NewEvent } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { isRecord } from "../plain-json.js";
import { agentFor, askToRemember, GO, rememberTool } from "./agent.test.data.js";
import { type CrashScenario, crashAfterCommit, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { watchToolCompletions } from "./tool-completions.js";

export const SESSION = "threads-session";
export const RUN = "threads-run";
/** Two LangGraph threads served by one handler (one session, one run). */
export const FIRST = "thread-a";
export const SECOND = "thread-b";

/** A thread's first message: its user asks for the thread's own name. */
export function ask(threadId: string) {
  return { messages: [new HumanMessage(threadId)] };
}

// Turn 1: send (not idempotent) and lookup (idempotent) for the thread's user, with the tool
// call ids every thread gets ("call_1", "call_2": a fake model's, or some provider's); turn 2:
// the answer, from the tool results.
function decide(messages: BaseMessage[]) {
  const user = String(messages.find((message) => HumanMessage.isInstance(message))?.content);
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  if (results.length === 0)
    return new AIMessage({
      content: "",
      tool_calls: [
        { id: "call_1", name: "send", args: { to: user } },
        { id: "call_2", name: "lookup", args: { key: user } },
      ],
    });
  const contents = results.map((message) => String(message.content)).sort();
  return new AIMessage(`${user}: ${contents.join(" | ")}`);
}

/**
 * One process's tools: `send` counts what it sent, to whom (`note` hears of it); `lookup` is
 * idempotent. `hold`: lookup never returns (it stays in flight, as at a crash), and send
 * returns only once the lookup of its thread is running (so that it is recorded by then).
 */
export function world(options: { hold?: boolean; note?: (effect: string) => void } = {}) {
  const sent: string[] = [];
  const lookupRunning = new Map<string, () => void>();
  const lookupStarted = new Map<string, Promise<void>>();
  const started = (key: string) => {
    let promise = lookupStarted.get(key);
    if (!promise) {
      promise = new Promise((resolve) => lookupRunning.set(key, resolve));
      lookupStarted.set(key, promise);
    }
    return promise;
  };
  const send = tool(
    async ({ to }: { to: string }) => {
      sent.push(to);
      options.note?.(`send:${to}`);
      if (options.hold) await started(to);
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const lookup = tool(
    async ({ key }: { key: string }) => {
      if (options.hold) {
        void started(key);
        lookupRunning.get(key)?.();
        await new Promise(() => {});
      }
      return `value of ${key}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  return { sent, tools: [send, lookup] };
}

/** One process's agent: one handler for every thread, the middleware and the saver. */
export function threadsAgent(store: EventStore, tools: ReturnType<typeof world>["tools"]) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const model = fakeModel();
  for (let call = 0; call < 4; call++) model.respond(decide);
  const agent = createAgent({
    model,
    tools,
    middleware: [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  return { handler, agent, model };
}

/** `when` for the commit of the `tool.completed` of `send` to `to`. */
function sendCompletedTo(to: string): (event: NewEvent) => boolean {
  const attempts = new Set<string>();
  return (event) => {
    const payload = event.payload as { name?: unknown; args?: { to?: unknown } } | undefined;
    if (event.type === "tool.requested" && payload?.name === "send" && payload.args?.to === to)
      attempts.add(String(event.attemptId));
    return event.type === "tool.completed" && attempts.has(String(event.attemptId));
  };
}

/**
 * `store` as a ledger written before threads were recorded: no event keeps its thread
 * (`metadata.langchain.threadId`).
 */
export function withoutThreads(store: EventStore): EventStore {
  const strip = (event: NewEvent): NewEvent => {
    const langchain = event.metadata?.langchain;
    if (!isRecord(langchain) || !("threadId" in langchain)) return event;
    const { threadId: _threadId, ...rest } = langchain;
    return { ...event, metadata: { ...event.metadata, langchain: rest } };
  };
  const append: EventStore["append"] = (request) =>
    store.append({ ...request, events: request.events.map(strip) });
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") return append;
      const value: unknown = Reflect.get(target, property, target);
      // Methods with private fields must run on the store itself, not on the proxy.
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export const toolCallThreadsCrashes = {
  /**
   * A ledger without threads: `remember` returns, and the process dies once its completion is
   * recorded, before LangGraph saved the tool task's write.
   */
  "tool-call-threads:without-threads": async (store) => {
    const crashing = crashAfterCommit(
      withoutThreads(store),
      (event) => event.type === "tool.completed",
    );
    const crashed = agentFor(crashing, [rememberTool(() => noteEffect("remember"))], askToRemember);
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
  /**
   * Both threads on one handler, the same tool call ids in each. The first thread's send is
   * done and its lookup in flight when the second thread runs; the process dies as the second
   * thread's send is recorded as completed (before LangGraph saved that task's write), with its
   * lookup in flight too.
   */
  "tool-call-threads:second-crashes": async (store) => {
    const crashing = crashAfterCommit(store, sendCompletedTo(SECOND));
    const watched = watchToolCompletions(crashing);
    const { tools } = world({ hold: true, note: noteEffect });
    const { agent, handler } = threadsAgent(watched.store, tools);
    const first = agent.invoke(ask(FIRST), threadConfig(handler, FIRST));
    await watched.completed("send");
    await agent.invoke(ask(SECOND), threadConfig(handler, SECOND));
    await first;
  },
} satisfies Record<string, CrashScenario>;
