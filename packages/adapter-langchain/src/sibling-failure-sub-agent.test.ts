import { type LedgerEvent, readWholeSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { afterEach, describe, expect, it, vi } from "vitest";
import { threadConfig } from "./testing/helpers.js";
import { askLookup, RUN, siblingFailureServer } from "./testing/sibling-failure.test.data.js";

const SESSION = "sibling-failure";

/**
 * The sibling failure's server (siblingFailureServer), its sub-agent's first model call waiting
 * for the next turn to start: it goes on while the next turn runs. That turn's answer waits for
 * it to stop.
 */
function server() {
  return siblingFailureServer({
    sessionId: SESSION,
    subAgent: (nextTurn) => ({
      lookup: async ({ turn }) => `found ${turn}`,
      model: async (messages: BaseMessage[], call) => {
        if (call === 1) await nextTurn;
        const result = messages.find((message) => ToolMessage.isInstance(message));
        if (result) return new AIMessage(`done: ${String(result.content)}`);
        return askLookup(call);
      },
    }),
  });
}

/** The chains started in the session and not ended, by LangChain's run id. */
function chainsLeftOpen(events: readonly LedgerEvent[]): LedgerEvent[] {
  const ended = new Set(
    events
      .filter((event) => /^x\.langchain\.chain\.(completed|failed)$/.test(event.type))
      .map((event) => (event.payload as { chainRunId?: string }).chainRunId),
  );
  return events.filter(
    (event) =>
      event.type === "x.langchain.chain.started" &&
      !ended.has((event.payload as { chainRunId?: string }).chainRunId),
  );
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a sub-agent LangGraph lets run on after a tool beside it failed the step", () => {
  it("is recorded by one writer, its chains closed, and the thread's next turn works", async () => {
    const errors = vi.spyOn(console, "error");
    const { store, handler, agent } = server();
    const config = threadConfig(handler, "thread-1");

    const first = await agent.invoke({ messages: [new HumanMessage("turn 1")] }, config).then(
      () => "done",
      (error: unknown) => String(error),
    );
    expect(first).toMatch(/the service is down/);
    const second = await agent.invoke({ messages: [new HumanMessage("turn 2")] }, config);
    expect(String(second.messages.at(-1)?.content)).toBe("done: done: found 2");

    // LangChain's callback manager logs what a handler's callback threw (a ConflictError of two
    // recorders writing the sub-agent's run, as its chain ended).
    expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([]);
    const events = await readWholeSession(store, SESSION);
    const subAgentRun = events.find(
      (event) => event.type === "run.started" && event.runId.startsWith(`${RUN}>thread-1>tools:`),
    )?.runId;
    // The sub-agent's calls made after its tool call ended are recorded in its subgraph's run.
    expect(
      events.filter((event) => event.runId === subAgentRun).map((event) => event.type),
    ).toEqual(
      expect.arrayContaining(["model.requested", "model.completed", "x.langchain.chain.completed"]),
    );
    // Every chain ended, but the first sub-agent's graph: LangChain reports no end for it.
    expect(chainsLeftOpen(events).map((event) => [event.runId, event.payload])).toEqual([
      [RUN, { chainRunId: expect.any(String), name: "LangGraph" }],
    ]);

    // delegate-1, stopped beside fail, stays unresolved (it may have had its effect): the run
    // can be failed, not completed; the sub-agent's run is closed with it.
    await handler.failRun(new Error("shutting down"));
    const runs = await store.listRuns(SESSION);
    expect(runs.find((run) => run.runId === subAgentRun)?.status).toBe("failed");
  });
});
