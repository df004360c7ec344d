import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { ToolMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it, type TestContext } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import { RUN, SESSION, world } from "./testing/tool-node.test.data.js";

const scratch = scratchDirectory("langchain-tool-node-", afterAll);

/**
 * The first process dies inside `send` (a child, killed there); the ledger it leaves, and the
 * world the next process finds: the message it sent is out.
 */
async function crashInsideSend(name: string, onTestFinished: TestContext["onTestFinished"]) {
  const path = join(scratch, `${name}.db`);
  const crashed = await crashInChild("tool-node:crash-in-send", path);
  const store = await openLedger(path, onTestFinished);
  return { store, run: world(store, { sent: crashed.count("sent") }) };
}

function resume(store: EventStore, run: ReturnType<typeof world>, handleToolErrors?: boolean) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const graph = run.graph(handleToolErrors === undefined ? {} : { handleToolErrors });
  return {
    graph,
    config: threadConfig(handler),
    invoke: () => graph.invoke(null, threadConfig(handler)).catch((error: unknown) => ({ error })),
  };
}

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("a plain graph's ToolNode after a crash (README: plain LangGraph graphs)", () => {
  it("with its default handleToolErrors, the refusal of an unresolved call becomes a ToolMessage", async ({
    onTestFinished,
  }) => {
    const { store, run } = await crashInsideSend("default-handling", onTestFinished);
    const outcome = await resume(store, run).invoke();
    // Fails open: the graph goes on, and the model sees the ledger's refusal as the tool's error.
    expect(outcome).not.toHaveProperty("error");
    expect(run.effects.sent).toBe(1);
    expect(run.effects.modelAnswers).toEqual([expect.stringContaining("was in flight")]);
  });

  it("with handleToolErrors: false it stops; resolved by a person, the call is answered through the graph's state", async ({
    onTestFinished,
  }) => {
    const { store, run } = await crashInsideSend("no-handling", onTestFinished);
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
