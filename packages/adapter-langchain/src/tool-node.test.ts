import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Command } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { restoreMessages } from "./restore-messages.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { lines, threadConfig } from "./testing/helpers.js";
import { parallelWorld, RUN, SESSION, world } from "./testing/tool-node.test.data.js";

const scratch = scratchDirectory("langchain-tool-node-", { beforeAll, afterAll });

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
  it("with its default handleToolErrors, the refusal of an unresolved call stops the graph before the model reads it", async ({
    onTestFinished,
  }) => {
    const { store, run } = await crashInsideSend("default-handling", onTestFinished);
    const outcome = await resume(store, run).invoke();
    // The ToolNode turns the refusal into a ToolMessage; the handler refuses the thread's next
    // model call with the same error, so the model never takes it for send's answer.
    const refusal = findLedgerError((outcome as { error: unknown }).error, "unresolved-attempt");
    expect(refusal?.details).toMatchObject({ toolCallId: "call-send", name: "send" });
    expect(run.effects).toEqual({ sent: 1, modelAnswers: [] });

    // The tools node's output, that ToolMessage, is saved in the thread's state, and the next
    // resume does not run that node again: its model call, whose prompt carries the saved
    // refusal for a call still undecided, is refused too (README: Plain LangGraph graphs).
    const again = await resume(store, run).invoke();
    expect(
      findLedgerError((again as { error: unknown }).error, "unresolved-attempt")?.details,
    ).toMatchObject({ toolCallId: "call-send", name: "send" });
    expect(run.effects).toEqual({ sent: 1, modelAnswers: [] });
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
    await person.abandon(unresolved, "checked the outbox: sent");

    // The callback cannot answer a tool call from the ledger: every resume still stops.
    const again = await resume(store, run, false).invoke();
    expect(
      findLedgerError((again as { error: unknown }).error, "unresolved-attempt"),
    ).toBeDefined();

    // The README's recipe: the turn's results from the ledger (the abandoned call's reason),
    // given to the graph's state, and the tools node for any call without one.
    const answered = resume(store, run, false);
    const { toolMessages } = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    const result = await answered.graph.invoke(
      new Command({ update: { messages: toolMessages }, goto: "tools" }),
      answered.config,
    );
    expect(result.messages.at(-1)?.content).toBe("done");
    expect(run.effects).toEqual({
      sent: 1,
      modelAnswers: [
        "This tool call did not finish (a crash or an abort cut it off) and was not run again: checked the outbox: sent",
      ],
    });
  });

  // The test's own expect: expect.poll needs it in a concurrent test.
  it("a parallel turn: the README's recipe gives the model every tool result of the turn", async ({
    onTestFinished,
    expect,
  }) => {
    const db = join(scratch, "parallel.db");
    const logs = { emails: join(scratch, "emails.log"), weather: join(scratch, "weather.log") };
    await crashInChild("tool-node:parallel-turn", db, logs.emails, logs.weather);
    const store = await openLedger(db, onTestFinished);
    expect([lines(logs.emails), lines(logs.weather)]).toEqual([1, 1]);

    // Resume: send_email already ran and is not run again; the graph stops there.
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const resumed = parallelWorld(store, logs);
    const stopped = await resumed.graph
      .invoke(null, threadConfig(handler))
      .catch((error: unknown) => error);
    expect(findLedgerError(stopped, "unresolved-attempt")?.details).toMatchObject({
      toolCallId: "call-email",
    });

    // While the person looks, get_weather (idempotent) has run again and is in the ledger.
    await expect.poll(() => lines(logs.weather)).toBe(2);
    await expect
      .poll(
        async () =>
          (await restoreMessages(store, { sessionId: SESSION, runId: RUN })).pendingToolCalls,
      )
      .toEqual([]);

    // The README's recipe: the turn's results from the ledger, and the tools node for the rest.
    const { toolMessages } = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    const result = await resumed.graph.invoke(
      new Command({ update: { messages: toolMessages }, goto: "tools" }),
      threadConfig(handler),
    );
    expect(result.messages.at(-1)?.content).toBe("Done. sent to bob; sunny in Paris");
    expect(resumed.modelSaw).toEqual(["send_email: sent to bob", "get_weather: sunny in Paris"]);
    expect([lines(logs.emails), lines(logs.weather)]).toEqual([1, 2]);
  });

  it("a parallel turn: a call without a recorded result is run by the tools node, the others are not", async ({
    onTestFinished,
  }) => {
    const db = join(scratch, "parallel-rest.db");
    const logs = {
      emails: join(scratch, "emails-rest.log"),
      weather: join(scratch, "weather-rest.log"),
    };
    await crashInChild("tool-node:parallel-turn", db, logs.emails, logs.weather);
    const store = await openLedger(db, onTestFinished);

    // Straight after the crash (no resume yet): get_weather has no result in the ledger.
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["call-weather"]);
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const resumed = parallelWorld(store, logs);
    await resumed.graph.invoke(
      new Command({ update: { messages: restored.toolMessages }, goto: "tools" }),
      threadConfig(handler),
    );
    expect(resumed.modelSaw).toEqual(["send_email: sent to bob", "get_weather: sunny in Paris"]);
    expect([lines(logs.emails), lines(logs.weather)]).toEqual([1, 2]);
  });
});
