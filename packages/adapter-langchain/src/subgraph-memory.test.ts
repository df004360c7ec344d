import { inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { keptBy, LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { threadConfig } from "./testing/helpers.js";
import { ASK, callsOf, RUN, SESSION, supervisorGraph } from "./testing/subgraph.test.data.js";

const INVOCATIONS = 3;
const RESEARCH = ["model", "lookup", "model", "send_email", "model"];

describe("a long-lived handler recording subgraphs", () => {
  for (const mode of ["node", "function"] as const)
    it(`keeps no child run of a subgraph (${mode}) once its invocation settled, and closes them all with its run`, async () => {
      const store = new MemoryEventStore();
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const graph = supervisorGraph({
        mode,
        checkpointer: new LedgerCheckpointSaver({ store }),
        effect: () => undefined,
      });
      for (let turn = 0; turn < INVOCATIONS; turn++) {
        const result = await graph.invoke(ASK, threadConfig(handler, `thread-${turn}`));
        expect(result.messages.at(-1)?.content).toBe("finished");
        // Each invocation runs the subgraph twice: nothing of either is kept once it settled.
        expect(keptBy(handler)).toMatchObject({ subgraphChildren: 0, subgraphRecorders: 0 });
      }
      await handler.completeRun("done");

      const { runs, unresolved } = await inspectSession(store, SESSION);
      expect(unresolved).toEqual([]);
      const root = runs.find((run) => run.runId === RUN);
      expect(root?.children.map(callsOf)).toEqual(
        Array.from({ length: 2 * INVOCATIONS }, () => RESEARCH),
      );
      // Let go of while open, each child run is still closed with the handler's run.
      expect(root?.children.map((child) => child.status)).toEqual(
        Array.from({ length: 2 * INVOCATIONS }, () => "completed"),
      );
    });
});
