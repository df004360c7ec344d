import { type EventStore, inspectSession, SessionRecorder } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { type StructuredToolInterface, tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { z } from "zod";
import { type CrashScenario, crashAfterCommit, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";
import { watchToolCompletions } from "./tool-completions.js";

export const SESSION = "agent-session";
export const RUN = "agent-run";

export const GO = { messages: [{ role: "user", content: "go" }] };

// Turn 1: two parallel tool calls; turn 2: a final answer built from the tool results.
export function script(messages: BaseMessage[]) {
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  if (results.length === 0)
    return new AIMessage({
      content: "",
      tool_calls: [
        { id: "call-lookup", name: "lookup", args: { key: "x" } },
        { id: "call-send", name: "send", args: { to: "bob" } },
      ],
    });
  return new AIMessage(`final: ${results.map((message) => message.content).join(" | ")}`);
}

/** `script`, each call also noted as an effect (a crash child tells the test what it paid). */
export function notedScript(messages: BaseMessage[]) {
  noteEffect("model");
  return script(messages);
}

/**
 * One process's tools: `lookup` (idempotent) and `send`, counting their effects; `note` hears
 * of each. `block(fn)`: send awaits `fn` once it has sent, before it returns.
 */
export function world(
  options: { sendIdempotent?: boolean; note?: (effect: "lookup" | "send") => void } = {},
) {
  const effects = { lookup: 0, send: 0 };
  let blockSend: (() => Promise<void>) | undefined;
  const lookup = tool(
    async ({ key }: { key: string }) => {
      effects.lookup++;
      options.note?.("lookup");
      return `value of ${key}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true },
    },
  );
  const send = tool(
    async ({ to }: { to: string }) => {
      effects.send++;
      options.note?.("send");
      if (blockSend) await blockSend();
      return `sent to ${to}`;
    },
    {
      name: "send",
      description: "write",
      schema: z.object({ to: z.string() }),
      metadata: { idempotent: options.sendIdempotent ?? false },
    },
  );
  return {
    effects,
    tools: [lookup, send],
    block(fn: () => Promise<void>) {
      blockSend = fn;
    },
  };
}

/**
 * One process's agent on the run: the handler (on `recorder`, if given), the middleware and the
 * saver, over `store`.
 */
export function agentFor(
  store: EventStore,
  tools: StructuredToolInterface[],
  answer: (messages: BaseMessage[]) => AIMessage = script,
  recorder?: SessionRecorder,
) {
  return ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    tools,
    answer,
    ...(recorder ? { recorder } : {}),
  });
}

/** A person, from another process, abandons or approves the run's one unresolved call (send). */
export async function personDecides(
  store: EventStore,
  decision: "abandon" | "approve",
  reason: string,
) {
  const person = await SessionRecorder.resume({
    store,
    sessionId: SESSION,
    runId: RUN,
    actor: { type: "human", id: "ops" },
  });
  const [unresolved] = (await inspectSession(store, SESSION)).unresolved;
  if (unresolved?.toolCallId !== "call-send") throw new Error("the send call is unresolved");
  await person[decision](unresolved, reason);
}

/**
 * `world()`'s agent on `store` (its handler on `recorder`, if given), invoked with `GO` and
 * aborted while send runs: send does not watch the signal and completes anyway (the message goes
 * out). Resolves once send is done, with what `invoke` threw.
 */
export async function abortedInsideSend(store: EventStore, recorder?: SessionRecorder) {
  const sending = world();
  const controller = new AbortController();
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  sending.block(async () => {
    controller.abort();
    await new Promise((resolve) => setTimeout(resolve, 50));
    finish();
  });
  const { agent, handler } = agentFor(store, sending.tools, script, recorder);
  const error = await agent
    .invoke(GO, { ...threadConfig(handler), signal: controller.signal })
    .catch((caught: unknown) => caught);
  await finished;
  return { ...sending, agent, handler, error };
}

/** A tool that returns a Command (with its ToolMessage); `onRun` hears of each run. */
export function rememberTool(onRun: () => void) {
  return tool(
    async ({ fact }: { fact: string }, runConfig) => {
      onRun();
      return new Command({
        update: {
          messages: [
            new ToolMessage({ content: `saved ${fact}`, tool_call_id: runConfig.toolCall.id }),
          ],
        },
      });
    },
    { name: "remember", description: "write", schema: z.object({ fact: z.string() }) },
  );
}

/** Asks for `remember` once, then answers as `script` does. */
export function askToRemember(messages: BaseMessage[]) {
  return messages.some((message) => ToolMessage.isInstance(message))
    ? script(messages)
    : new AIMessage({
        content: "",
        tool_calls: [{ id: "call-remember", name: "remember", args: { fact: "x" } }],
      });
}

/**
 * An idempotent `clock` reading a clock that has ticked `ticks.count` times (in this process
 * and any crashed one before it); `note` hears of each tick. With `crashAtTick`, the process
 * dies inside that tick's call.
 */
export function clockTool(
  ticks: { count: number },
  options: { crashAtTick?: number; note?: (effect: "tick") => void } = {},
) {
  return tool(
    async () => {
      ticks.count++;
      options.note?.("tick");
      if (ticks.count === options.crashAtTick) return crashHere();
      return `tick ${ticks.count}`;
    },
    {
      name: "clock",
      description: "read",
      schema: z.object({}),
      metadata: { idempotent: true },
    },
  );
}

/** Asks for `clock` on two turns, every call with the tool call id `id`; then answers. */
export function askForClockTwice(id: string) {
  return (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length < 2)
      return new AIMessage({ content: "", tool_calls: [{ id, name: "clock", args: {} }] });
    return new AIMessage(`final: ${results.map((message) => message.content).join(" | ")}`);
  };
}

export const agentCrashes = {
  /**
   * The process dies inside send, once its message is out and lookup, run alongside it, is
   * recorded. `idempotent` declares send idempotent.
   */
  "agent:send-in-flight": async (store, [declared]) => {
    const watched = watchToolCompletions(store);
    const first = world({ sendIdempotent: declared === "idempotent", note: noteEffect });
    first.block(async () => {
      await watched.completed("lookup");
      await crashHere();
    });
    const crashed = agentFor(watched.store, first.tools, notedScript);
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
  /**
   * The process dies once send's result reaches the ledger, before LangGraph's write of its task
   * or the next checkpoint does: the ledger holds send completed, the thread's state does not.
   */
  "agent:send-completed": async (store) => {
    const sends = new Set<string | undefined>();
    const crashing = crashAfterCommit(store, (event) => {
      if (event.type === "tool.requested" && (event.payload as { name?: unknown }).name === "send")
        sends.add(event.attemptId);
      return event.type === "tool.completed" && sends.has(event.attemptId);
    });
    const first = world({ note: noteEffect });
    const crashed = agentFor(crashing, first.tools, notedScript);
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
  /**
   * remember returns a Command; the process dies once its result reaches the ledger, before
   * LangGraph's write of the tool task or the next checkpoint does.
   */
  "agent:command": async (store) => {
    const crashing = crashAfterCommit(store, (event) => event.type === "tool.completed");
    const crashed = agentFor(crashing, [rememberTool(() => noteEffect("remember"))], askToRemember);
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
  /** The process dies inside the second turn's clock call (the first turn's is checkpointed). */
  "agent:second-turn": async (store, [id = ""]) => {
    const clock = clockTool({ count: 0 }, { crashAtTick: 2, note: noteEffect });
    const crashed = agentFor(store, [clock], askForClockTwice(id));
    await crashed.agent.invoke(GO, threadConfig(crashed.handler));
  },
} satisfies Record<string, CrashScenario>;
