import {
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
  toAtif,
} from "@agent-ledger/core";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import { SECRET, scrub } from "./testing/redacted-checkpoints.test.data.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";
import {
  ASK,
  callsOf,
  RUN,
  SESSION,
  supervisorGraph,
  THREAD,
} from "./testing/subgraph.test.data.js";

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
