import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  type LedgerEvent,
  readWholeRun,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterAll, beforeAll, expect } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { recordedThreadId } from "../langchain-metadata.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { threadConfig, toolGraph } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

const scratch = scratchDirectory("langchain-shared-handler-", { beforeAll, afterAll });
export const SESSION = "shared";
export const RUN = "shared-run";

/**
 * Where the non-idempotent `send` of thread A runs before A pauses at `interrupt()`:
 * - `tool-node`: a plain graph's ToolNode runs it beside `confirm`, which pauses (one task);
 * - `agent`: createAgent with the ledger's middleware runs it beside `confirm`, in a task of its
 *   own, which LangGraph does not run again: the resumed `confirm` is matched with its paused
 *   attempt (a new attempt of the same step);
 * - `agent-nested`: createAgent with the ledger's middleware: `book` calls it, then pauses.
 */
export type Shape = "tool-node" | "agent" | "agent-nested";

/** A promise and what settles it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/**
 * What the tools and the model of one test share. Thread B's call (its `slow` tool, or its
 * model call with `hold: "model"`) waits for `release` once it started (`held`), so that B's
 * invocation is in progress on the handler while thread A pauses and is resumed.
 */
export function world(hold: "tool" | "model") {
  const release = gate();
  const held = gate();
  const world = {
    sent: [] as string[],
    hold,
    release: release.open,
    held: held.opened,
    /** Runs in A's `confirm` when A is resumed (before it answers). */
    onResume: async () => {},
    async wait() {
      held.open();
      await release.opened;
    },
  };
  return world;
}
export type World = ReturnType<typeof world>;

function tools(world: World) {
  const send = tool(
    async ({ to }: { to: string }) => {
      world.sent.push(to);
      return `sent to ${to}`;
    },
    { name: "send", description: "sends (not idempotent)", schema: z.object({ to: z.string() }) },
  );
  const confirm = tool(
    async ({ what }: { what: string }) => {
      const answer = String(interrupt({ what }));
      await world.onResume();
      return answer;
    },
    { name: "confirm", description: "asks a person", schema: z.object({ what: z.string() }) },
  );
  const book = tool(
    async ({ to }: { to: string }, config: RunnableConfig) => {
      await send.invoke({ to }, config);
      return `booked: ${interrupt({ what: `book for ${to}?` })}`;
    },
    { name: "book", description: "books", schema: z.object({ to: z.string() }) },
  );
  const slow = tool(
    async () => {
      await world.wait();
      return "slow done";
    },
    { name: "slow", description: "a long call", schema: z.object({}) },
  );
  return { send, confirm, book, slow };
}

/**
 * The model: thread B asks for `slow` (its call waits, with `hold: "model"`); A asks for the
 * calls of `shape` (to `to`, its first message); both answer with the results they got.
 */
function model(shape: Shape, world: World) {
  return new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    const ask = String(messages.find((message) => HumanMessage.isInstance(message))?.content);
    if (ask === "B" && world.hold === "model" && results.length === 0) await world.wait();
    if (results.length > 0)
      return new AIMessage(`done: ${results.map((message) => message.content).join(" | ")}`);
    if (ask === "B")
      return new AIMessage({ content: "", tool_calls: [{ id: "b-slow", name: "slow", args: {} }] });
    const id = ask.toLowerCase();
    if (shape === "agent-nested")
      return new AIMessage({
        content: "",
        tool_calls: [{ id: `${id}-book`, name: "book", args: { to: ask } }],
      });
    return new AIMessage({
      content: "",
      tool_calls: [
        { id: `${id}-send`, name: "send", args: { to: ask } },
        { id: `${id}-confirm`, name: "confirm", args: { what: "ok?" } },
      ],
    });
  });
}

/** One process's graph of `shape` with one handler, which every thread is invoked on. */
export function graphOf(store: EventStore, shape: Shape, world: World) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const { send, confirm, book, slow } = tools(world);
  const checkpointer = new LedgerCheckpointSaver({ store });
  const scripted = model(shape, world);
  if (shape === "tool-node") {
    const graph = toolGraph(scripted, [send, confirm, slow], checkpointer, {
      handleToolErrors: false,
    });
    return { handler, graph };
  }
  const agentTools = shape === "agent" ? [send, confirm, slow] : [book, slow];
  const middleware = [ledgerMiddleware({ handler })];
  return {
    handler,
    graph: createAgent({ model: scripted, tools: agentTools, middleware, checkpointer }),
  };
}

export type Graph = ReturnType<typeof graphOf>["graph"];

/** The answer of an invocation, or the ledger error it stopped with (code, call's name). */
export function outcomeOf(run: Promise<{ messages: BaseMessage[] }>) {
  return run.then(
    (result) => ({ answer: String(result.messages.at(-1)?.content) }),
    (error: unknown) => {
      const refusal = findLedgerError(error);
      if (!refusal) throw error;
      return { refused: refusal.code, name: refusal.details.name };
    },
  );
}

export async function openLedger(name: string): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, `${name}-${crypto.randomUUID()}.db`) });
  await store.init();
  return store;
}

/**
 * Each recorded attempt of the run (model and tool calls), with its thread, its step and what
 * ended it: the ledger as a person inspecting it reads it.
 */
export async function attempts(store: EventStore) {
  const events = await readWholeRun(store, { sessionId: SESSION, runId: RUN });
  const outcomes = new Map<string, string[]>();
  for (const event of events)
    if (event.attemptId && !event.type.endsWith(".requested"))
      outcomes.set(event.attemptId, [...(outcomes.get(event.attemptId) ?? []), event.type]);
  return events
    .filter((event) => event.type === "tool.requested" || event.type === "model.requested")
    .map((event: LedgerEvent) => {
      const payload = event.payload as { name?: string; toolCallId?: string };
      return {
        thread: recordedThreadId(event),
        kind: event.type.split(".")[0],
        name: payload.name,
        toolCallId: payload.toolCallId,
        stepId: event.stepId,
        retryOf: event.retryOf,
        outcomes: outcomes.get(event.attemptId as string) ?? [],
      };
    });
}

export type Attempts = Awaited<ReturnType<typeof attempts>>;

/** Thread `thread`'s tool attempts: name, call id, outcomes, and how many share a step. */
export function toolCallsOf(recorded: Attempts, thread: string) {
  const ofThread = recorded.filter((call) => call.thread === thread && call.kind === "tool");
  return ofThread.map(({ name, toolCallId, outcomes, stepId, retryOf }) => ({
    name,
    toolCallId,
    outcomes,
    retryOf,
    inStep: ofThread.filter((other) => other.stepId === stepId).length,
  }));
}

/**
 * Thread A of `shape` runs until it pauses at `interrupt()`, then is resumed with a person's
 * answer, on the one handler, with nothing else in progress (`busy: false`) or while thread
 * B's invocation runs on it from before A starts until after A's resume ended (`busy: true`).
 */
export async function pauseAndResume(shape: Shape, busy: boolean, hold: "tool" | "model" = "tool") {
  const store = await openLedger(`${shape}-${busy ? "busy" : "alone"}`);
  try {
    const current = world(hold);
    const { handler, graph } = graphOf(store, shape, current);
    const other = busy ? startB(graph, handler, current) : undefined;
    await other?.held;
    const paused = await graph.invoke(
      { messages: [new HumanMessage("A")] },
      threadConfig(handler, "A"),
    );
    const resumed = await outcomeOf(
      graph.invoke(new Command({ resume: "yes" }), threadConfig(handler, "A")),
    );
    current.release();
    return {
      interrupts: (paused as { __interrupt__?: unknown[] }).__interrupt__?.length ?? 0,
      resumed,
      sent: current.sent,
      otherAnswer: await other?.outcome,
      recorded: await attempts(store),
    };
  } finally {
    await store.close();
  }
}

/** Thread B's invocation, in progress until its held call is released. */
export function startB(graph: Graph, handler: LedgerCallbackHandler, current: World) {
  const outcome = outcomeOf(
    graph.invoke({ messages: [new HumanMessage("B")] }, threadConfig(handler, "B")),
  );
  return { outcome, held: current.held };
}

/** What thread B's invocation recorded: `slow` once, completed, and each model call once. */
export function expectBRecordedOnce(recorded: Attempts) {
  expect(toolCallsOf(recorded, "B")).toEqual([
    {
      name: "slow",
      toolCallId: "b-slow",
      outcomes: ["tool.completed"],
      retryOf: undefined,
      inStep: 1,
    },
  ]);
  const models = recorded.filter((call) => call.thread === "B" && call.kind === "model");
  expect(models.map((call) => call.outcomes)).toEqual([["model.completed"], ["model.completed"]]);
  expect(models.every((call) => call.retryOf === undefined)).toBe(true);
}

/**
 * Thread `thread`'s tool calls in the agent shape, resumed as alone: send's one attempt,
 * completed before the pause; confirm's paused attempt, then the one the resume ran, in the
 * same step (matched with the paused one, as a resume matches it).
 */
export function expectAgentResumed(recorded: Attempts, thread: string) {
  const id = thread.toLowerCase();
  const call = (name: string, outcome: string, inStep: number) => ({
    name,
    toolCallId: `${id}-${name}`,
    outcomes: [outcome],
    retryOf: undefined,
    inStep,
  });
  expect(toolCallsOf(recorded, thread)).toEqual([
    call("send", "tool.completed", 1),
    call("confirm", "tool.failed", 2),
    call("confirm", "tool.completed", 2),
  ]);
}
