import { findLedgerError, inspectSession, SessionRecorder } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { FlakyStore, threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "tool-node-session";
const RUN = "tool-node-run";

/**
 * A plain graph with LangGraph's prebuilt ToolNode (what createReactAgent builds), recorded by
 * the callback alone (no middleware exists for it), and a `send` tool (not idempotent) in
 * which the first process "dies": the store goes down, nothing more is recorded.
 */
function world(store: FlakyStore) {
  const effects = { sent: 0, modelAnswers: [] as string[] };
  let crash = true;
  const send = tool(
    async ({ to }: { to: string }) => {
      effects.sent++;
      if (crash) {
        crash = false;
        store.failing = true;
        throw new Error("process died");
      }
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const graph = (options: { handleToolErrors?: boolean }) => {
    const model = new ScriptedChatModel((messages: BaseMessage[]) => {
      const result = messages.findLast((message) => ToolMessage.isInstance(message));
      if (!result)
        return new AIMessage({
          content: "",
          tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
        });
      effects.modelAnswers.push(String(result.content));
      return new AIMessage("done");
    });
    return new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state, config: RunnableConfig) => ({
        messages: [await model.invoke(state.messages, config)],
      }))
      .addNode("tools", new ToolNode([send], options))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
      )
      .addEdge("tools", "agent")
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  };
  return { effects, graph };
}

/** The first process: it dies inside `send`; the store is back for the next one. */
async function crashInsideSend(store: FlakyStore, run: ReturnType<typeof world>) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  await expect(
    run
      .graph({ handleToolErrors: false })
      .invoke({ messages: [new HumanMessage("email bob")] }, threadConfig(handler)),
  ).rejects.toThrow();
  store.failing = false;
}

function resume(store: FlakyStore, run: ReturnType<typeof world>, handleToolErrors?: boolean) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const graph = run.graph(handleToolErrors === undefined ? {} : { handleToolErrors });
  return {
    graph,
    config: threadConfig(handler),
    invoke: () => graph.invoke(null, threadConfig(handler)).catch((error: unknown) => ({ error })),
  };
}

describe("a plain graph's ToolNode after a crash (README: plain LangGraph graphs)", () => {
  it("with its default handleToolErrors, the refusal of an unresolved call becomes a ToolMessage", async () => {
    const store = new FlakyStore();
    const run = world(store);
    await crashInsideSend(store, run);
    const outcome = await resume(store, run).invoke();
    // Fails open: the graph goes on, and the model sees the ledger's refusal as the tool's error.
    expect(outcome).not.toHaveProperty("error");
    expect(run.effects.sent).toBe(1);
    expect(run.effects.modelAnswers).toEqual([expect.stringContaining("was in flight")]);
  });

  it("with handleToolErrors: false it stops; resolved by a person, the call is answered through the graph's state", async () => {
    const store = new FlakyStore();
    const run = world(store);
    await crashInsideSend(store, run);
    const stopped = await resume(store, run, false).invoke();
    const refusal = findLedgerError((stopped as { error: unknown }).error, "unresolved-attempt");
    expect(refusal?.details).toMatchObject({ toolCallId: "call-send", name: "send" });

    // A person checked the outbox and abandons the call.
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "human", id: "ops" },
    });
    const [unresolved] = (await inspectSession(store, SESSION)).unresolved;
    if (!unresolved) throw new Error("expected an unresolved call");
    await person.abandon(
      { ...unresolved, requestedEventId: unresolved.requestEventId },
      "checked the outbox: sent",
    );

    // The callback cannot answer a tool call from the ledger: every resume still stops.
    const again = await resume(store, run, false).invoke();
    expect(
      findLedgerError((again as { error: unknown }).error, "unresolved-attempt"),
    ).toBeDefined();

    // The graph's own way: answer the call as the tools node, then resume.
    const answered = resume(store, run, false);
    await answered.graph.updateState(
      answered.config,
      {
        messages: [
          new ToolMessage({ content: "already sent", tool_call_id: "call-send", name: "send" }),
        ],
      },
      "tools",
    );
    const result = await answered.invoke();
    expect(result).not.toHaveProperty("error");
    expect(run.effects).toEqual({ sent: 1, modelAnswers: ["already sent"] });
  });
});
