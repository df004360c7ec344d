import {
  type EventStore,
  findLedgerError,
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
 * Where the non-idempotent `send` runs before the graph pauses at `interrupt()`:
 * - `same-step`: a plain graph's ToolNode runs it beside `confirm`, which pauses (one task);
 * - `same-tool`: `book` (createAgent, with the ledger's middleware) calls it, then pauses;
 * - `same-node`: a plain graph's node calls it directly (no model asked for it), then pauses;
 * - `other-task`: createAgent runs it beside `confirm`, in a task of its own (its write is saved).
 */
export type Shape = "same-step" | "same-tool" | "same-node" | "other-task";

/** The tools of one process; `sent` counts the messages that went out, in every process. */
function tools(sent: string[]) {
  const send = tool(
    async ({ to }: { to: string }) => {
      sent.push(to);
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const confirm = tool(async ({ what }: { what: string }) => String(interrupt({ what })), {
    name: "confirm",
    description: "asks a person",
    schema: z.object({ what: z.string() }),
  });
  const book = tool(
    async ({ to }: { to: string }, config) => {
      await send.invoke({ to }, config);
      return `booked: ${String(interrupt({ what: `book for ${to}?` }))}`;
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
function graphOf(store: EventStore, shape: Shape, sent: string[], recorder?: SessionRecorder) {
  const handler = new LedgerCallbackHandler(
    recorder ? { recorder } : { store, sessionId: SESSION, runId: RUN },
  );
  const { send, confirm, book } = tools(sent);
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
        return { messages: [new AIMessage(`notified: ${String(interrupt({ what: "ok?" }))}`)] };
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
 * The graph of `shape` pauses at its interrupt; a person answers "yes" and the graph resumes,
 * on the handler that ran it (`same-handler`) or on a new one, as a new process builds it.
 * What came of it: the answer or the ledger error it stopped with, the messages sent, and the
 * steps of each tool's recorded attempts.
 */
export async function resumeAfterInterrupt(
  store: EventStore,
  shape: Shape,
  resumedBy: "same-handler" | "new-handler",
  on: "store" | "recorder" = "store",
) {
  const sent: string[] = [];
  const actor = { type: "agent", id: "interrupt" } as const;
  const first = graphOf(
    store,
    shape,
    sent,
    on === "recorder"
      ? new SessionRecorder({ store, sessionId: SESSION, runId: RUN, actor })
      : undefined,
  );
  const paused = await first.graph.invoke(
    { messages: [new HumanMessage("go")] },
    threadConfig(first.handler),
  );
  const interrupts = (paused as { __interrupt__?: unknown[] }).__interrupt__?.length ?? 0;
  const second =
    resumedBy === "same-handler"
      ? first
      : graphOf(
          store,
          shape,
          sent,
          on === "recorder"
            ? await SessionRecorder.resume({ store, sessionId: SESSION, runId: RUN, actor })
            : undefined,
        );
  const outcome = await second.graph
    .invoke(new Command({ resume: "yes" }), threadConfig(second.handler))
    .then(
      (result) => ({ answer: String(result.messages.at(-1)?.content) }),
      (error: unknown) => {
        const refusal = findLedgerError(error);
        if (!refusal) throw error;
        return refusal.code === "invalid-argument"
          ? { refused: refusal.code, path: refusal.path }
          : { refused: refusal.code, name: refusal.details.name };
      },
    );
  return { interrupts, outcome, sent, steps: await toolSteps(store) };
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
