import { join } from "node:path";
import {
  findLedgerError,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { restoreMessages } from "./restore-messages.js";
import type { SubgraphCalls } from "./subgraph-calls.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import { ASK, RUN, SESSION, subgraphWorld, THREAD } from "./testing/subgraph-restore.test.data.js";

const scratch = scratchDirectory("langchain-subgraph-restore-", { beforeAll, afterAll });

/** Counts each effect (messages sent, model calls paid) of a process. */
function counter() {
  const counts: Record<string, number> = {};
  return { counts, effect: (what: string) => (counts[what] = (counts[what] ?? 0) + 1) };
}

describe("restoreMessages for a ToolNode inside a subgraph (README: Plain LangGraph graphs, subgraphs)", () => {
  it("refuses the handler's run, names the subgraph's run and checkpoint_ns, and the README recipe from it runs nothing twice", async ({
    onTestFinished,
  }) => {
    // What the graph costs without a crash: one message, two model calls.
    const reference = counter();
    const plain = new MemoryEventStore();
    const handlerWithoutCrash = new LedgerCallbackHandler({
      store: plain,
      sessionId: SESSION,
      runId: RUN,
    });
    await subgraphWorld(plain, reference).graph.invoke(
      ASK,
      threadConfig(handlerWithoutCrash, THREAD),
    );
    expect(reference.counts).toEqual({ sent: 1, model: 2 });

    const path = join(scratch, "crash-in-send.db");
    const crashed = await crashInChild("subgraph-restore:crash-in-send", path);
    expect([crashed.count("sent"), crashed.count("model")]).toEqual([1, 1]);
    const store = await openLedger(path, onTestFinished);
    const resumed = counter();
    const { graph, modelSaw } = subgraphWorld(store, resumed);
    const config = () =>
      threadConfig(new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN }), THREAD);

    // A person checked the outbox: the message is out. The call is in the subgraph's run.
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    if (!inFlight) throw new Error("expected the call in flight at the crash");
    expect(inFlight.runId).not.toBe(RUN);
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: inFlight.runId,
      actor: { type: "human", id: "ops" },
    });
    await person.abandon(inFlight, "checked the outbox: sent");

    // The callback cannot answer a call from the ledger: a resume still stops.
    const stopped = await graph.invoke(null, config()).catch((error: unknown) => error);
    expect(findLedgerError(stopped, "unresolved-attempt")).toBeDefined();

    // The handler's run has no call: restored, it would answer nothing, and the recipe would
    // send again. It is refused, naming the subgraph's run and its checkpoint namespace.
    const refusal = await restoreMessages(
      store,
      { sessionId: SESSION, runId: RUN },
      { threadId: THREAD },
    ).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(LedgerError);
    expect(refusal).toMatchObject({ code: "not-found", path: "$.runId" });
    const { subgraphs } = (refusal as LedgerError).details as { subgraphs: SubgraphCalls[] };
    expect(subgraphs).toEqual([
      {
        runId: inFlight.runId,
        node: "research",
        checkpointNs: expect.stringMatching(/^research:/),
      },
    ]);
    const subgraph = subgraphs.at(-1) as SubgraphCalls;
    expect((refusal as Error).message).toContain(subgraph.runId);
    expect((refusal as Error).message).toContain(`checkpoint_ns: "${subgraph.checkpointNs}"`);

    // The README recipe, from the subgraph's run, into the subgraph's state.
    const { toolMessages, pendingToolCalls } = await restoreMessages(
      store,
      { sessionId: SESSION, runId: subgraph.runId },
      { threadId: THREAD },
    );
    expect(pendingToolCalls).toEqual([]);
    await graph.updateState(
      { configurable: { thread_id: THREAD, checkpoint_ns: subgraph.checkpointNs } },
      { messages: toolMessages },
      "tools",
    );
    const result = await graph.invoke(null, config());

    expect(result.messages.at(-1)?.content).toBe("done");
    expect(modelSaw).toEqual([expect.stringContaining("checked the outbox: sent")]);
    // Over both processes: the message sent once, the model paid as without the crash.
    expect(crashed.count("sent") + (resumed.counts.sent ?? 0)).toBe(reference.counts.sent);
    expect(crashed.count("model") + (resumed.counts.model ?? 0)).toBe(reference.counts.model);
  });
  it("a handler's run with a model call of its own before the subgraph: refused too, naming the subgraph's run, not restored as a turn with nothing pending", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "plan-then-crash-in-send.db");
    const crashed = await crashInChild("subgraph-restore:plan-then-crash-in-send", path);
    expect([crashed.count("planned"), crashed.count("sent")]).toEqual([1, 1]);
    const store = await openLedger(path, onTestFinished);
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    if (!inFlight) throw new Error("expected the call in flight at the crash");
    expect(inFlight.runId).not.toBe(RUN);
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: inFlight.runId,
      actor: { type: "human", id: "ops" },
    });
    await person.abandon(inFlight, "checked the outbox: sent");

    // The handler's run holds the plan's model call, a turn asking for no tool: restored, it
    // would say nothing is pending, and the subgraph's send would be forgotten.
    const refusal = await restoreMessages(
      store,
      { sessionId: SESSION, runId: RUN },
      { threadId: THREAD },
    ).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(LedgerError);
    expect(refusal).toMatchObject({ code: "not-found", path: "$.runId" });
    const { subgraphs } = (refusal as LedgerError).details as { subgraphs: SubgraphCalls[] };
    expect(subgraphs).toEqual([
      {
        runId: inFlight.runId,
        node: "research",
        checkpointNs: expect.stringMatching(/^research:/),
      },
    ]);
    const message = (refusal as Error).message;
    expect(message).toContain(
      `its last turn in LangGraph thread "${THREAD}" is not the thread's latest`,
    );
    expect(message).toContain(inFlight.runId);
    expect(message).toContain(`runId: ${JSON.stringify(inFlight.runId)}`);

    // The recipe from the subgraph's run: the message is not sent again.
    const subgraph = subgraphs[0] as SubgraphCalls;
    const { toolMessages, pendingToolCalls } = await restoreMessages(
      store,
      { sessionId: SESSION, runId: subgraph.runId },
      { threadId: THREAD },
    );
    expect(pendingToolCalls).toEqual([]);
    const resumed = counter();
    const { graph, modelSaw } = subgraphWorld(store, { ...resumed, plan: true });
    await graph.updateState(
      { configurable: { thread_id: THREAD, checkpoint_ns: subgraph.checkpointNs } },
      { messages: toolMessages },
      "tools",
    );
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const result = await graph.invoke(null, threadConfig(handler, THREAD));
    expect(result.messages.at(-1)?.content).toBe("done");
    expect(modelSaw).toEqual([expect.stringContaining("checked the outbox: sent")]);
    expect(resumed.counts.sent ?? 0).toBe(0);
    expect(resumed.counts.planned ?? 0).toBe(0);
  });
});
