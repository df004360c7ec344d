import { type LedgerEvent, readWholeSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";
import { askLookup, RUN, siblingFailureServer } from "./testing/sibling-failure.test.data.js";

const SESSION = "middleware-reopened";

/**
 * The sibling failure's server (siblingFailureServer). The first sub-agent asks for `lookup` once
 * its invocation has failed; ledgerMiddleware records that call (in the sub-agent's run) and it
 * waits for the thread's next turn, whose start reopens the handler's recorder. Then `lookup`
 * asks a model itself, recorded in the same run, and returns.
 */
function server() {
  let lookupStarted = () => {};
  const lookupRunning = new Promise<void>((resolve) => {
    lookupStarted = resolve;
  });
  let firstTurnEnded = () => {};
  const firstTurnOver = new Promise<void>((resolve) => {
    firstTurnEnded = resolve;
  });
  const summarizer = new ScriptedChatModel(() => new AIMessage("summed up"));
  let subTurn = 0;
  const built = siblingFailureServer({
    sessionId: SESSION,
    subAgent: (nextTurn) => ({
      lookup: async ({ turn }, config) => {
        if (turn === 1) {
          lookupStarted();
          await nextTurn;
          await summarizer.invoke([new HumanMessage(`sum up ${turn}`)], config);
        }
        return `found ${turn}`;
      },
      model: async (messages: BaseMessage[]) => {
        const result = messages.find((message) => ToolMessage.isInstance(message));
        if (result) return new AIMessage(`done: ${String(result.content)}`);
        subTurn++;
        // The first sub-agent asks for its lookup once its invocation has failed.
        if (subTurn === 1) await firstTurnOver;
        return askLookup(subTurn);
      },
    }),
  });
  return { ...built, firstTurnEnded, lookupRunning };
}

describe("a sub-agent's tool call that ledgerMiddleware records, running on after a tool beside its own failed the step", () => {
  it("records its outcome in the sub-agent's run after the thread's next turn reopened the handler's recorder", async () => {
    const { store, handler, agent, subAgents, firstTurnEnded, lookupRunning } = server();
    const config = threadConfig(handler, "thread-1");

    const first = await agent.invoke({ messages: [new HumanMessage("turn 1")] }, config).then(
      () => "done",
      (error: unknown) => String(error),
    );
    expect(first).toMatch(/the service is down/);
    firstTurnEnded();
    await lookupRunning;
    const second = await agent.invoke({ messages: [new HumanMessage("turn 2")] }, config);
    expect(String(second.messages.at(-1)?.content)).toBe("done: done: found 2");

    // The first sub-agent's graph ends aborted with its step, after its lookup ran to its end.
    const settled = await Promise.allSettled(subAgents);
    expect(
      settled.map((each) => (each.status === "rejected" ? String(each.reason) : each.status)),
    ).toEqual([expect.stringMatching(/^AbortError/), "fulfilled"]);
    const events = await readWholeSession(store, SESSION);
    const lookup = events.find(
      (event) =>
        event.type === "tool.requested" &&
        (event.payload as { toolCallId?: string }).toolCallId === "lookup-1",
    );
    expect(lookup?.runId).toMatch(new RegExp(`^${RUN}>thread-1>tools:`));
    const outcomes = events.filter(
      (event) => event.attemptId === lookup?.attemptId && event.type !== "tool.requested",
    );
    const content = (event: LedgerEvent) =>
      (event.payload as { result?: { data?: { content?: unknown } } }).result?.data?.content;
    expect(outcomes.map((event) => [event.type, event.runId, content(event)])).toEqual([
      ["tool.completed", lookup?.runId, "found 1"],
    ]);
    // Written by the sub-agent run's one writer: its tools node ended, not with a ConflictError.
    const failedChains = events.filter(
      (event) => event.runId === lookup?.runId && event.type === "x.langchain.chain.failed",
    );
    expect(failedChains).toEqual([]);
    await handler.failRun(new Error("shutting down"));
  });
});
