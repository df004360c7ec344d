import { inspectSession, MemoryEventStore, type RunView } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import { ASK, RUN, SESSION, supervisorGraph, THREAD } from "./testing/subgraph.test.data.js";

/** What a run holds: its calls' names in order (model calls as `model`). */
function callsOf(run: RunView): string[] {
  return run.steps.map((step) =>
    step.kind === "model" ? "model" : String(step.attempts[0]?.name),
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
    });
  }
});
