import {
  type EventStore,
  findLedgerError,
  type Redaction,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { threadConfig, toolGraph } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "interrupt-session";
export const RUN = "interrupt-run";

/**
 * Where the non-idempotent `send` runs before the graph pauses at `interrupt()` (or fails where
 * it would pause, see `Stop`):
 * - `same-step`: a plain graph's ToolNode runs it beside `confirm`, which pauses (one task);
 * - `same-tool`: `book` (createAgent, with the ledger's middleware) calls it, then pauses;
 * - `same-node`: a plain graph's node calls it directly (no model asked for it), then pauses;
 * - `other-task`: createAgent runs it beside `confirm`, in a task of its own (its write is saved).
 */
export type Shape = "same-step" | "same-tool" | "same-node" | "other-task";

/** How the first invocation stops where the graph is resumed from: paused, or failed. */
export type Stop = "interrupt" | "error";

/** What every process's tools share: the messages that went out, and the failures left. */
interface World {
  sent: string[];
  stop: Stop;
  /** Failures still to come (`error`: the first `confirm` or `book` fails, later ones pass). */
  failures: number;
}

/** Pauses, or fails the first time, where a person is asked `what`. */
function askPerson(world: World, what: string): string {
  if (world.stop === "interrupt") return String(interrupt({ what }));
  if (world.failures > 0) {
    world.failures--;
    throw new Error(`no one answered ${what}`);
  }
  return "yes";
}

/** The tools of one process. */
function tools(world: World) {
  const send = tool(
    async ({ to }: { to: string }) => {
      world.sent.push(to);
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const confirm = tool(async ({ what }: { what: string }) => askPerson(world, what), {
    name: "confirm",
    description: "asks a person",
    schema: z.object({ what: z.string() }),
  });
  const book = tool(
    async ({ to }: { to: string }, config) => {
      await send.invoke({ to }, config);
      return `booked: ${askPerson(world, `book for ${to}?`)}`;
    },
    { name: "book", description: "books", schema: z.object({ to: z.string() }) },
  );
  return { send, confirm, book };
}

/** Asks for `calls` once, then answers with the tool results it got. */
function scriptedModel(calls: { id: string; name: string; args: Record<string, unknown> }[]) {
  return new ScriptedChatModel((messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0) return new AIMessage({ content: "", tool_calls: calls });
    return new AIMessage(`done: ${results.map((message) => String(message.content)).join(" | ")}`);
  });
}

/**
 * One process's graph of `shape` on the run, with a new handler: built with the store, or on
 * `recorder`.
 */
function graphOf(store: EventStore, shape: Shape, world: World, recorder?: SessionRecorder) {
  const handler = new LedgerCallbackHandler(
    recorder ? { recorder } : { store, sessionId: SESSION, runId: RUN },
  );
  const { send, confirm, book } = tools(world);
  const checkpointer = new LedgerCheckpointSaver({ store });
  if (shape === "same-tool") {
    const model = scriptedModel([{ id: "call-book", name: "book", args: { to: "bob" } }]);
    const middleware = [ledgerMiddleware({ handler })];
    return { handler, graph: createAgent({ model, tools: [book], middleware, checkpointer }) };
  }
  if (shape === "same-node") {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("notify", async (_state, config: RunnableConfig) => {
        await send.invoke({ to: "bob" }, config);
        return { messages: [new AIMessage(`notified: ${askPerson(world, "ok?")}`)] };
      })
      .addEdge(START, "notify")
      .addEdge("notify", END)
      .compile({ checkpointer });
    return { handler, graph };
  }
  const model = scriptedModel([
    { id: "call-send", name: "send", args: { to: "bob" } },
    { id: "call-confirm", name: "confirm", args: { what: "ok?" } },
  ]);
  if (shape === "other-task") {
    const middleware = [ledgerMiddleware({ handler })];
    return {
      handler,
      graph: createAgent({ model, tools: [send, confirm], middleware, checkpointer }),
    };
  }
  const graph = toolGraph(model, [send, confirm], checkpointer, { handleToolErrors: false });
  return { handler, graph };
}

/**
 * The graph of `shape` stops where a person is asked (`stop`: it pauses at its interrupt, or
 * fails there), and resumes: after the pause a person answers "yes" (`Command({ resume })`),
 * after the failure the graph is invoked again from its checkpoint (`null`). It resumes on the
 * handler that ran it (`same-handler`) or on a new one, as a new process builds it; the handlers
 * are built with the store, or `on` a recorder (`redact`: that recorder's redaction). What came
 * of it: the answer or the error it stopped with (a ledger error's code), the messages sent, and
 * the steps of each tool's recorded attempts.
 */
export async function resumeAfterStop(
  store: EventStore,
  shape: Shape,
  resumedBy: "same-handler" | "new-handler",
  options: { on?: "store" | "recorder"; stop?: Stop; redact?: Redaction } = {},
) {
  const { on = "store", stop = "interrupt", redact } = options;
  const world: World = { sent: [], stop, failures: 1 };
  const recorderOptions = {
    store,
    sessionId: SESSION,
    runId: RUN,
    actor: { type: "agent", id: "interrupt" } as const,
    ...(redact ? { redact } : {}),
  };
  const first = graphOf(
    store,
    shape,
    world,
    on === "recorder" ? new SessionRecorder(recorderOptions) : undefined,
  );
  const stopped = await first.graph
    .invoke({ messages: [new HumanMessage("go")] }, threadConfig(first.handler))
    .catch((error: unknown) => ({ error }));
  const interrupts = (stopped as { __interrupt__?: unknown[] }).__interrupt__?.length ?? 0;
  const failed = "error" in stopped ? String((stopped.error as Error).message) : undefined;
  const second =
    resumedBy === "same-handler"
      ? first
      : graphOf(
          store,
          shape,
          world,
          on === "recorder" ? await SessionRecorder.resume(recorderOptions) : undefined,
        );
  const input = stop === "interrupt" ? new Command({ resume: "yes" }) : null;
  const outcome = await second.graph.invoke(input, threadConfig(second.handler)).then(
    (result) => ({ answer: String(result.messages.at(-1)?.content) }),
    (error: unknown) => {
      const refusal = findLedgerError(error);
      if (!refusal) return { failed: String((error as Error).message) };
      return refusal.code === "invalid-argument"
        ? { refused: refusal.code, path: refusal.path }
        : { refused: refusal.code, name: refusal.details.name };
    },
  );
  return {
    interrupts,
    ...(failed !== undefined ? { failed } : {}),
    outcome,
    sent: world.sent,
    steps: await toolSteps(store),
  };
}

/** How many steps each tool's recorded attempts span, by tool name. */
async function toolSteps(store: EventStore): Promise<Record<string, number>> {
  const steps = new Map<string, Set<string>>();
  for (const event of await readWholeRun(store, { sessionId: SESSION, runId: RUN })) {
    if (event.type !== "tool.requested") continue;
    const name = String((event.payload as { name?: unknown }).name);
    steps.set(name, (steps.get(name) ?? new Set()).add(String(event.stepId)));
  }
  return Object.fromEntries([...steps].map(([name, ids]) => [name, ids.size]));
}
