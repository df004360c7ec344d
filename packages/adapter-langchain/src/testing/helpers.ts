import { existsSync, readFileSync } from "node:fs";
import {
  type EventStore,
  type LedgerEvent,
  MemoryEventStore,
  type Redaction,
  readWholeRun,
  resolveEvents,
  type SessionRecorder,
  StoreUnavailableError,
} from "@agent-ledger/core";
import type { AIMessage, BaseMessage } from "@langchain/core/messages";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, MessagesAnnotation, type RetryPolicy, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { createAgent, type createMiddleware } from "langchain";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

/** The events of a run, with content-addressed payloads resolved. */
export async function runEvents(
  store: EventStore,
  sessionId: string,
  runId: string,
): Promise<LedgerEvent[]> {
  return resolveEvents(store, await readWholeRun(store, { sessionId, runId }));
}

/**
 * A memory store whose appends can be switched to fail, as if the database were down while the
 * process lives: for what the adapter does when it cannot record (fail closed). A crash is no
 * such thing: crash tests kill a child process (see crashing-agent.test.data.ts).
 */
export class FlakyStore extends MemoryEventStore {
  failing = false;
  /** Fail appends whose batch contains an event of one of these types. */
  failTypes: string[] | undefined;

  override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
    const hit =
      this.failing &&
      (!this.failTypes || request.events.some((event) => this.failTypes?.includes(event.type)));
    if (hit) throw new StoreUnavailableError("database is down (test)");
    return super.append(request);
  }
}

/** The payload of an event that must exist. */
export function payloadOf<T>(event: LedgerEvent | undefined): T {
  if (!event) throw new Error("expected an event");
  return event.payload as T;
}

/**
 * The config these tests invoke a graph with: LangGraph thread `threadId`, the handler as its
 * callback, and each checkpoint written before the next step runs (as a crash test needs).
 */
export function threadConfig(handler: LedgerCallbackHandler, threadId = "thread-1") {
  return {
    configurable: { thread_id: threadId },
    callbacks: [handler],
    durability: "sync" as const,
  };
}

/**
 * One process's agent on a run, as the crash tests build it: createAgent with a scripted model
 * that gives `answer`, the ledger's handler on the run (or on `recorder`, a recorder of it),
 * `middleware` made for that handler (default: the ledger's own), and the ledger's checkpoint
 * saver, all over `store`.
 */
export function ledgerAgent(options: {
  store: EventStore;
  sessionId: string;
  runId: string;
  answer: (messages: BaseMessage[]) => AIMessage | Promise<AIMessage>;
  tools?: Parameters<typeof createAgent>[0]["tools"];
  middleware?: (handler: LedgerCallbackHandler) => ReturnType<typeof createMiddleware>[];
  recorder?: SessionRecorder;
  /** The handler's own `redact` (without `recorder`: the handler opens its recorders). */
  redact?: Redaction;
  /** Default: the ledger's saver on `store`. */
  checkpointer?: BaseCheckpointSaver;
}) {
  const { store, sessionId, runId, answer, recorder, redact } = options;
  const model = new ScriptedChatModel((messages) => answer(messages));
  const handler = new LedgerCallbackHandler(
    recorder ? { recorder } : { store, sessionId, runId, ...(redact ? { redact } : {}) },
  );
  const agent = createAgent({
    model,
    tools: options.tools ?? [],
    middleware: options.middleware?.(handler) ?? [ledgerMiddleware({ handler })],
    checkpointer: options.checkpointer ?? new LedgerCheckpointSaver({ store }),
  });
  return { model, handler, agent };
}

/** The lines of a side-effect log (a tool writes one per effect), 0 when it does not exist. */
export function lines(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
}

/**
 * A plain LangGraph graph, as the README's "Plain LangGraph graphs" builds one: a node calling
 * `model` (a chat model, or one with its tools bound), then LangGraph's prebuilt ToolNode with `tools` while the model asks for tools.
 * `retryPolicy` is the tools node's (LangGraph runs its task again when it throws).
 */
export function toolGraph(
  model: Pick<Runnable<BaseMessage[], BaseMessage>, "invoke">,
  tools: ConstructorParameters<typeof ToolNode>[0],
  checkpointer: BaseCheckpointSaver,
  options: ConstructorParameters<typeof ToolNode>[1] = {},
  retryPolicy?: RetryPolicy,
) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: RunnableConfig) => ({
      messages: [await model.invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode(tools, options), retryPolicy ? { retryPolicy } : {})
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
    )
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}
