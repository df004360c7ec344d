import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  type RunView,
} from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerAgent, runEvents, threadConfig, toolGraph } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "s";
const RUN = "hitl";
const QUESTION = "Refund 5 to bob?";

/** A tool that asks a person before it refunds (LangGraph's human in the loop). */
function refundTool(refunded: string[]) {
  return tool(
    async ({ to, amount }: { to: string; amount: number }) => {
      const answer = String(interrupt(QUESTION));
      if (answer !== "yes") return `not refunded: ${answer}`;
      refunded.push(to);
      return `refunded ${amount} to ${to}`;
    },
    {
      name: "refund",
      description: "refunds, once a person agrees",
      schema: z.object({ to: z.string(), amount: z.number() }),
    },
  );
}

/** Asks for `calls` once, then answers with the tool results it got. */
function scriptedModel(calls: { id: string; name: string; args: Record<string, unknown> }[]) {
  return new ScriptedChatModel((messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0) return new AIMessage({ content: "", tool_calls: calls });
    return new AIMessage(`done: ${results.map((message) => String(message.content)).join(" | ")}`);
  });
}

/** A plain graph (model node, prebuilt ToolNode) whose model asks for one refund. */
function refundGraph(store: EventStore, refunded: string[]) {
  const model = scriptedModel([
    { id: "call-refund", name: "refund", args: { to: "bob", amount: 5 } },
  ]);
  return toolGraph(model, [refundTool(refunded)], new LedgerCheckpointSaver({ store }));
}

async function runOf(store: EventStore): Promise<RunView> {
  const run = (await inspectSession(store, SESSION)).runs.find((view) => view.runId === RUN);
  if (!run) throw new Error(`no run ${RUN}`);
  return run;
}

describe("a graph paused at interrupt() is inspected as paused, waiting for a person's answer", () => {
  it("a tool that pauses: the run awaits the answer to its question, on that call; resumed, it goes on and is paused no more", async () => {
    const store = new MemoryEventStore();
    const refunded: string[] = [];
    const graph = refundGraph(store, refunded);
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const paused = await graph.invoke(
      { messages: [new HumanMessage("refund bob")] },
      threadConfig(handler),
    );
    expect((paused as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);

    const run = await runOf(store);
    expect(run.status).toBe("running");
    expect(run.awaitingDecision?.calls).toEqual([
      { name: "refund", toolCallId: "call-refund", args: { to: "bob", amount: 5 } },
    ]);
    expect(run.awaitingDecision?.decideWith).toContain(`"${QUESTION}"`);
    expect(run.awaitingDecision?.decideWith).toContain("new Command({ resume");
    // The tool's attempt is still recorded as ended at the interrupt, as replay needs it.
    const events = await runEvents(store, SESSION, RUN);
    const failed = events.filter((event) => event.type === "tool.failed");
    expect(
      failed.map((event) => (event.payload as { error: { name: string } }).error.name),
    ).toEqual(["GraphInterrupt"]);

    const done = await graph.invoke(new Command({ resume: "yes" }), threadConfig(handler));
    expect(String(done.messages.at(-1)?.content)).toBe("done: refunded 5 to bob");
    expect(refunded).toEqual(["bob"]);
    expect((await runOf(store)).awaitingDecision).toBeUndefined();
    const after = await runEvents(store, SESSION, RUN);
    expect(after.filter((event) => event.type === "tool.completed")).toHaveLength(1);
  });

  it("createAgent, two calls pausing in one step: one pause listing both calls and both questions; a new process's resume ends it", async () => {
    const store = new MemoryEventStore();
    const ask = (name: string) =>
      tool(async ({ what }: { what: string }) => `${name}: ${String(interrupt({ what }))}`, {
        name,
        description: "asks a person",
        schema: z.object({ what: z.string() }),
      });
    const calls = [
      { id: "call-a", name: "approve_a", args: { what: "ship order 1?" } },
      { id: "call-b", name: "approve_b", args: { what: "ship order 2?" } },
    ];
    const answer = (messages: BaseMessage[]) => scriptedModel(calls).script(messages, 0);
    const build = () =>
      ledgerAgent({
        store,
        sessionId: SESSION,
        runId: RUN,
        answer,
        tools: [ask("approve_a"), ask("approve_b")],
      });
    const first = build();
    const paused = await first.agent.invoke(
      { messages: [new HumanMessage("ship")] },
      threadConfig(first.handler),
    );
    const interrupts = paused.__interrupt__ ?? [];
    expect(interrupts).toHaveLength(2);

    const pause = (await runOf(store)).awaitingDecision;
    expect(pause?.calls).toEqual([
      { name: "approve_a", toolCallId: "call-a", args: { what: "ship order 1?" } },
      { name: "approve_b", toolCallId: "call-b", args: { what: "ship order 2?" } },
    ]);
    expect(pause?.decideWith).toContain('{"what":"ship order 1?"}');
    expect(pause?.decideWith).toContain('{"what":"ship order 2?"}');

    const second = build();
    const resume = Object.fromEntries(interrupts.map((item) => [String(item.id), "yes"]));
    const done = await second.agent.invoke(new Command({ resume }), threadConfig(second.handler));
    expect(String(done.messages.at(-1)?.content)).toBe("done: approve_a: yes | approve_b: yes");
    expect((await runOf(store)).awaitingDecision).toBeUndefined();
  });

  it("a node that pauses outside any tool: the pause names the node; a long question is cut", async () => {
    const store = new MemoryEventStore();
    const long = `Publish this draft? ${"and more ".repeat(200)}`;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("review", async () => ({
        messages: [new AIMessage(`review: ${String(interrupt({ question: long }))}`)],
      }))
      .addEdge(START, "review")
      .addEdge("review", END)
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await graph.invoke({ messages: [new HumanMessage("draft")] }, threadConfig(handler));

    const pause = (await runOf(store)).awaitingDecision;
    expect(pause?.calls).toEqual([{ name: "review" }]);
    expect(pause?.decideWith).toContain("Publish this draft?");
    expect(pause?.decideWith?.length).toBeLessThan(400);

    // The node makes no call when it goes on: the resumed graph's own start ends the pause.
    const done = await graph.invoke(new Command({ resume: "ok" }), threadConfig(handler));
    expect(String(done.messages.at(-1)?.content)).toBe("review: ok");
    expect((await runOf(store)).awaitingDecision).toBeUndefined();
  });
});
