import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  type RunView,
  readWholeSession,
  runsInTreeOrder,
  SessionRecorder,
  toAtif,
} from "@agent-ledger/core";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
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
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { runEvents, threadConfig, toolGraph } from "./testing/helpers.js";
import { SECRET, scrub } from "./testing/redacted-checkpoints.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";
import {
  ASK,
  FlatLedgerHandler,
  RUN,
  SESSION,
  supervisorGraph,
  THREAD,
} from "./testing/subgraph.test.data.js";

/** What a run holds: its calls' names in order (model calls as `model`). */
function callsOf(run: RunView): string[] {
  return run.steps.map((step) =>
    step.kind === "model" ? "model" : String(step.attempts[0]?.name),
  );
}

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
  for (const mode of ["node", "function"] as const) {
    it(`records each invocation of a subgraph (${mode}) as a child run of the run that invoked it, caused by its node`, async () => {
      const store = new MemoryEventStore();
      const effects: string[] = [];
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const graph = supervisorGraph({
        mode,
        checkpointer: new LedgerCheckpointSaver({ store }),
        effect: (name) => effects.push(name),
      });
      const result = await graph.invoke(ASK, threadConfig(handler, THREAD));
      expect(result.messages.at(-1)?.content).toBe("finished");
      await handler.completeRun("done");

      const { runs, unresolved } = await inspectSession(store, SESSION);
      expect(unresolved).toEqual([]);
      const root = runs.find((run) => run.runId === RUN);
      if (!root) throw new Error("expected the supervisor's run");
      expect(callsOf(root)).toEqual(["model", "model", "model"]);
      // The loop: one child run per invocation, each with its own calls.
      expect(root.children.map(callsOf)).toEqual([
        ["model", "lookup", "model", "send_email", "model"],
        ["model", "lookup", "model", "send_email", "model"],
      ]);
      const rootEvents = await runEvents(store, SESSION, RUN);
      const researchNodes = rootEvents.filter(
        (event) =>
          event.type === "x.langchain.chain.started" &&
          (event.payload as { node?: string }).node === "research",
      );
      expect(researchNodes).toHaveLength(2);
      for (const [index, child] of root.children.entries()) {
        expect(child.status).toBe("completed");
        expect(child.causedByEventId).toBe(researchNodes[index]?.eventId);
        const [started] = await runEvents(store, SESSION, child.runId);
        expect(started).toMatchObject({
          type: "run.started",
          parentRunId: RUN,
          actor: { type: "agent", id: "research", framework: "langchain" },
          payload: { langgraphSubgraph: { node: "research", threadId: THREAD } },
        });
      }
      // The subgraph's own tool call is caused by its own model's completion, in its run.
      const childEvents = await runEvents(store, SESSION, root.children[0]?.runId ?? "");
      const lookup = childEvents.find((event) => event.type === "tool.requested");
      const asked = childEvents.find((event) => event.type === "model.completed");
      expect(lookup?.causedByEventId).toBe(asked?.eventId);
      expect(effects.filter((effect) => effect.startsWith("send"))).toEqual(["send 1", "send 2"]);
      // The ATIF trajectory embeds each child run's as a sub-agent's.
      const trajectory = await toAtif(store, SESSION);
      expect(trajectory.subagent_trajectories?.map((sub) => sub.trajectory_id)).toEqual(
        root.children.map((child) => child.runId),
      );
    });
  }

  /** The calls of each child run of the handler's run, the subgraph invoked twice from a node. */
  async function childRunCalls(subgraphCheckpointer: boolean) {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const graph = supervisorGraph({
      mode: "function",
      checkpointer: new LedgerCheckpointSaver({ store }),
      effect: () => undefined,
      subgraphCheckpointer,
    });
    await graph.invoke(ASK, threadConfig(handler, THREAD));
    const { runs } = await inspectSession(store, SESSION);
    return runs.find((run) => run.runId === RUN)?.children.map(callsOf);
  }

  it("the store form's redact and metadata reach the subgraphs' child runs, which inherit them", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({
      store,
      sessionId: SESSION,
      runId: RUN,
      redact: ["args.query"],
      metadata: { deployment: "eu-1" },
    });
    const graph = supervisorGraph({
      mode: "node",
      checkpointer: new LedgerCheckpointSaver({ store }),
      effect: () => {},
    });
    await graph.invoke(ASK, threadConfig(handler, THREAD));
    await handler.completeRun("done");
    const { runs } = await inspectSession(store, SESSION);
    const children = runs.find((run) => run.runId === RUN)?.children ?? [];
    expect(children).toHaveLength(2);
    for (const child of children) {
      const events = await runEvents(store, SESSION, child.runId);
      for (const event of events) expect(event.metadata).toMatchObject({ deployment: "eu-1" });
      const lookups = events.filter((event) => event.type === "tool.requested");
      expect(lookups.map((event) => event.payload)).toContainEqual(
        expect.objectContaining({ name: "lookup", args: { query: "[redacted]" } }),
      );
    }
  });

  for (const form of ["store", "recorder"] as const) {
    it(`closing the run from another handler (a new process) redacts what it writes to a subgraph's child run it did not open (${form} form)`, async () => {
      const store = new MemoryEventStore();
      const address = { store, sessionId: SESSION, runId: RUN, redact: scrub };
      const actor = { type: "agent", id: "supervisor" } as const;
      // A handler given the redaction, as each form takes it: a new process resumes the run.
      const handler = async (resumed: boolean) =>
        new LedgerCallbackHandler(
          form === "store"
            ? address
            : {
                recorder: resumed
                  ? await SessionRecorder.resume({ ...address, actor })
                  : new SessionRecorder({ ...address, actor }),
              },
        );
      const graph = supervisorGraph({
        mode: "node",
        checkpointer: new LedgerCheckpointSaver({ store }),
        effect: () => {},
        confirm: true,
      });
      // Paused in the subgraph: its child run is left running.
      await graph.invoke(ASK, threadConfig(await handler(false), THREAD));
      // A new process gives up on the run, the reason naming the key.
      await (await handler(true)).failRun(new Error(`gave up, key ${SECRET}`));
      const { runs } = await inspectSession(store, SESSION);
      const [child] = runs.find((run) => run.runId === RUN)?.children ?? [];
      expect(child?.status).toBe("failed");
      const failed = (await runEvents(store, SESSION, child?.runId ?? "")).at(-1);
      expect(failed?.type).toBe("run.failed");
      expect(JSON.stringify(failed)).toContain("gave up, key [key]");
      expect(JSON.stringify(await readWholeSession(store, SESSION))).not.toContain(SECRET);
    });
  }

  it("a subgraph compiled with checkpointer: true keeps one child run per thread, as it keeps one history", async () => {
    expect(await childRunCalls(true)).toEqual([
      [
        ...["model", "lookup", "model", "send_email", "model"],
        ...["model", "lookup", "model", "send_email", "model"],
      ],
    ]);
  });

  it("a subgraph compiled with checkpointer: false gets a child run per invocation too", async () => {
    expect(await childRunCalls(false)).toEqual([
      ["model", "lookup", "model", "send_email", "model"],
      ["model", "lookup", "model", "send_email", "model"],
    ]);
  });

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

  it("a createAgent invoked from a node records its model calls and ledgerMiddleware's tool calls in its child run", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const lookup = tool(async () => "facts", {
      name: "lookup",
      description: "read",
      schema: z.object({}),
    });
    const agent = createAgent({
      model: new ScriptedChatModel((messages) =>
        messages.at(-1)?.getType() === "tool"
          ? new AIMessage("report")
          : new AIMessage({
              content: "",
              tool_calls: [{ id: "call-1", name: "lookup", args: {} }],
            }),
      ),
      tools: [lookup],
      middleware: [ledgerMiddleware({ handler })],
    });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("researcher", async (state, config: RunnableConfig) => ({
        messages: (await agent.invoke({ messages: state.messages }, config)).messages.slice(-1),
      }))
      .addEdge(START, "researcher")
      .addEdge("researcher", END)
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
    await graph.invoke({ messages: [new HumanMessage("go")] }, threadConfig(handler, THREAD));
    const { runs } = await inspectSession(store, SESSION);
    const root = runs.find((run) => run.runId === RUN);
    expect(root && callsOf(root)).toEqual([]);
    expect(root?.children.map(callsOf)).toEqual([["model", "lookup", "model"]]);
    const childEvents = await runEvents(store, SESSION, root?.children[0]?.runId ?? "");
    const requested = childEvents.find((event) => event.type === "tool.requested");
    const asked = childEvents.find((event) => event.type === "model.completed");
    expect(requested?.causedByEventId).toBe(asked?.eventId);
  });

  it("a subgraph inside a subgraph is a child run of that subgraph's child run", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const checkpointer = new LedgerCheckpointSaver({ store });
    const team = supervisorGraph({ mode: "node", checkpointer, effect: () => undefined });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("team", team)
      .addEdge(START, "team")
      .addEdge("team", END)
      .compile({ checkpointer });
    await graph.invoke(ASK, threadConfig(handler, THREAD));
    const { runs } = await inspectSession(store, SESSION);
    const [teamRun, ...others] = runs.find((run) => run.runId === RUN)?.children ?? [];
    expect(others).toEqual([]);
    expect(teamRun && callsOf(teamRun)).toEqual(["model", "model", "model"]);
    expect(teamRun?.children.map((run) => [run.parentRunId, ...callsOf(run)])).toEqual([
      [teamRun?.runId, "model", "lookup", "model", "send_email", "model"],
      [teamRun?.runId, "model", "lookup", "model", "send_email", "model"],
    ]);
  });
});
