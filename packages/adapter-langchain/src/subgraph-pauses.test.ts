import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  runsInTreeOrder,
} from "@agent-ledger/core";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { threadConfig, toolGraph } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";
import {
  ASK,
  callsOf,
  FlatLedgerHandler,
  RUN,
  SESSION,
  supervisorGraph,
  THREAD,
} from "./testing/subgraph.test.data.js";

/** Each run of the session paused at a person's decision: its runId, parent and the calls it names. */
async function pausedRuns(store: EventStore) {
  const { runs } = await inspectSession(store, SESSION);
  return runsInTreeOrder(runs).flatMap(({ run }) =>
    run.awaitingDecision
      ? [{ runId: run.runId, parentRunId: run.parentRunId, calls: run.awaitingDecision.calls }]
      : [],
  );
}

describe("LangGraph subgraphs as child runs", () => {
  for (const beside of [false, true]) {
    it(`a subgraph's call paused at interrupt() is met again in its child run when the same handler resumes the thread${beside ? ", while another thread runs on it" : ""}`, async () => {
      const store = new MemoryEventStore();
      const effects: string[] = [];
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const graph = supervisorGraph({
        mode: "node",
        checkpointer: new LedgerCheckpointSaver({ store }),
        effect: (name) => effects.push(name),
        confirm: true,
      });
      const config = threadConfig(handler, THREAD);
      let paused = await graph.invoke(ASK, config);
      // What waits for a person is the subgraph's call: its child run is paused, naming it; the
      // handler's run waits on its child, running, as inspect reports a run whose child paused.
      const [pausedRun, ...others] = await pausedRuns(store);
      expect(others).toEqual([]);
      expect(pausedRun).toMatchObject({
        parentRunId: RUN,
        calls: [{ name: "send_email", toolCallId: "send-1", args: { task: "1" } }],
      });
      const { runs: before } = await inspectSession(store, SESSION);
      expect(before.find((run) => run.runId === RUN)?.status).toBe("running");
      // Another thread on the same handler, in progress while this one is resumed: the
      // handler's recorder is then given a replay again instead of being reopened.
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const other = beside
        ? toolGraph(
            new ScriptedChatModel(async () => {
              await gate;
              return new AIMessage("other done");
            }),
            [],
            new LedgerCheckpointSaver({ store }),
          ).invoke({ messages: [new HumanMessage("other")] }, threadConfig(handler, "other"))
        : Promise.resolve();
      await new Promise((resolve) => setTimeout(resolve, 50));
      const pausedAt = (result: object) => (result as { __interrupt__?: unknown[] }).__interrupt__;
      for (let pauses = 0; pausedAt(paused)?.length && pauses < 4; pauses++)
        paused = await graph.invoke(new Command({ resume: "yes" }), config);
      release();
      await other;
      expect(paused.messages.at(-1)?.content).toBe("finished");
      // Resumed, the child runs go on: none is paused any more, before the run is closed.
      expect(await pausedRuns(store)).toEqual([]);
      await handler.completeRun("done");
      expect(effects.filter((effect) => effect.startsWith("send"))).toEqual(["send 1", "send 2"]);
      const { runs, unresolved } = await inspectSession(store, SESSION);
      expect(unresolved).toEqual([]);
      // One step per call: the resumed send met the one that paused, in its child run.
      expect(runs.find((run) => run.runId === RUN)?.children.map(callsOf)).toEqual([
        ["model", "lookup", "model", "send_email", "model"],
        ["model", "lookup", "model", "send_email", "model"],
      ]);
    });
  }

  it("a thread paused in a subgraph by the previous version (flat, its pause on the handler's run) resumes there, its next pause there too", async () => {
    const store = new MemoryEventStore();
    const effects: string[] = [];
    const graph = supervisorGraph({
      mode: "node",
      checkpointer: new LedgerCheckpointSaver({ store }),
      effect: (name) => effects.push(name),
      confirm: true,
    });
    const before = new FlatLedgerHandler({ store, sessionId: SESSION, runId: RUN });
    let paused = await graph.invoke(ASK, threadConfig(before, THREAD));
    const pausedOn = async () =>
      (await pausedRuns(store)).map(({ runId, calls }) => [
        runId,
        calls.map((call) => call.toolCallId),
      ]);
    expect(await pausedOn()).toEqual([[RUN, ["send-1"]]]);

    // This version's handler, in a new process: the thread stays flat, its pauses too.
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const config = threadConfig(handler, THREAD);
    const seen: unknown[] = [];
    const pausedAt = (result: object) => (result as { __interrupt__?: unknown[] }).__interrupt__;
    for (let pauses = 0; pausedAt(paused)?.length && pauses < 4; pauses++) {
      paused = await graph.invoke(new Command({ resume: "yes" }), config);
      seen.push(...(await pausedOn()));
    }
    expect(paused.messages.at(-1)?.content).toBe("finished");
    expect(seen).toEqual([[RUN, ["send-2"]]]);
    expect(await pausedRuns(store)).toEqual([]);
    await handler.completeRun("done");
    expect(effects.filter((effect) => effect.startsWith("send"))).toEqual(["send 1", "send 2"]);
    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    expect(runs.find((run) => run.runId === RUN)?.children).toEqual([]);
  });

  it("a subgraph's node and a node of the graph that pause in one step: each run paused on its own node, told to answer each interrupt by id", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const asks = (node: string, question: string) => async () => ({
      messages: [new AIMessage(`${node}: ${String(interrupt(question))}`)],
    });
    const team = new StateGraph(MessagesAnnotation)
      .addNode("approve", asks("approve", "ship it?"))
      .addEdge(START, "approve")
      .addEdge("approve", END)
      .compile();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("review", asks("review", "publish it?"))
      .addNode("team", team)
      .addEdge(START, "review")
      .addEdge(START, "team")
      .addEdge("review", END)
      .addEdge("team", END)
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
    const config = threadConfig(handler, THREAD);
    const paused = await graph.invoke({ messages: [new HumanMessage("go")] }, config);
    const interrupts = (paused as { __interrupt__?: { id?: string }[] }).__interrupt__ ?? [];
    expect(interrupts).toHaveLength(2);

    const { runs } = await inspectSession(store, SESSION);
    const root = runs.find((run) => run.runId === RUN);
    const [teamRun] = root?.children ?? [];
    expect(root?.awaitingDecision?.calls).toEqual([{ name: "review" }]);
    expect(teamRun?.awaitingDecision?.calls).toEqual([{ name: "approve" }]);
    // LangGraph wants one answer per interrupt id, whichever run asked.
    for (const pause of [root?.awaitingDecision, teamRun?.awaitingDecision])
      expect(pause?.decideWith).toContain("[interrupt id]");
    expect(teamRun?.awaitingDecision?.decideWith).toContain('"ship it?"');
    expect(teamRun?.awaitingDecision?.decideWith).not.toContain("publish it?");

    const resume = Object.fromEntries(interrupts.map((item) => [String(item.id), "yes"]));
    const done = await graph.invoke(new Command({ resume }), config);
    expect(done.messages.map((message) => String(message.content)).sort()).toEqual([
      "approve: yes",
      "go",
      "review: yes",
    ]);
    expect(await pausedRuns(store)).toEqual([]);
  });
});
