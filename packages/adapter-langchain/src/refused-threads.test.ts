import { join } from "node:path";
import { findLedgerError, readWholeSession, resolveEvents } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { PendingWrite } from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keptBy } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { GO, RUN, SESSION, script, world } from "./testing/agent.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { ledgerAgent, threadConfig } from "./testing/helpers.js";
import { researchTool, sendAndResearch } from "./testing/refused-sibling.test.data.js";

const scratch = scratchDirectory("langchain-refused-threads-", { beforeAll, afterAll });

/**
 * The ledger's saver, whose writes for thread-1 wait until `release()`: thread 1's invocation,
 * once its tools ran, stays in progress meanwhile.
 */
class HeldSaver extends LedgerCheckpointSaver {
  release: () => void = () => {};
  readonly #released = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string) {
    if (config.configurable?.thread_id === "thread-1") await this.#released;
    return super.putWrites(config, writes, taskId);
  }
}

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("createAgent with the handler alone (no ledgerMiddleware)", () => {
  it("on resume, a refused tool call stops the run before the model reads the refusal", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "crash.db");
    // The process dies inside send (under ledgerMiddleware), once the message is out.
    await crashInChild("agent:send-in-flight", path);
    const store = await openLedger(path, onTestFinished);
    const handlerAlone = (tools: ReturnType<typeof world>["tools"]) =>
      ledgerAgent({
        store,
        sessionId: SESSION,
        runId: RUN,
        tools,
        answer: script,
        middleware: () => [],
      });

    // The user resumes without ledgerMiddleware: createAgent's tool node turns the refusal into
    // a ToolMessage, and the model call after it is refused with the same error.
    const second = world();
    const resumed = handlerAlone(second.tools);
    const error = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(error, "unresolved-attempt")?.details).toMatchObject({
      toolCallId: "call-send",
      name: "send",
    });
    expect(second.effects.send).toBe(0);
    expect(resumed.model.calls).toBe(0);
    expect(keptBy(resumed.handler).refusedThreads).toBe(0);
    // The ToolMessage stays saved in the thread's state: what a later resume makes of it is in
    // saved-refusals.test.ts.
  });

  it("a tool call beside the refused one, an agent tool, runs its own model call: the refusal stops the run only before the agent's next model call", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "sibling.db");
    // The process dies inside send while research, asked for in the same step, is in flight.
    await crashInChild("refused-sibling:send-in-flight", path);
    const store = await openLedger(path, onTestFinished);
    const second = world();
    let refusedSend = () => false;
    // research (made again by itself: idempotent) asks its model once send has been refused.
    const { research, inner } = researchTool(async () => {
      for (let waited = 0; !refusedSend() && waited < 5000; waited += 10)
        await new Promise((resolve) => setTimeout(resolve, 10));
    });
    const resumed = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: [...second.tools, research],
      answer: sendAndResearch,
      middleware: () => [],
    });
    refusedSend = () => keptBy(resumed.handler).refusedThreads === 1;

    const error = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    // send's refusal still stops the invocation before the agent's model reads it.
    expect(findLedgerError(error, "unresolved-attempt")?.details).toMatchObject({
      toolCallId: "call-send",
    });
    expect(second.effects.send).toBe(0);
    expect(resumed.model.calls).toBe(0);
    // research's own model call was research's business: it ran, and research completed with
    // its answer, not failed with send's refusal.
    expect(inner.calls).toBe(1);
    const events = await resolveEvents(store, await readWholeSession(store, SESSION));
    const researchEnds = events.filter(
      (event) =>
        /^tool\.(completed|failed)$/.test(event.type) &&
        (event.payload as { toolCallId?: string }).toolCallId === "call-research",
    );
    expect(researchEnds.map((event) => event.type)).toEqual(["tool.completed"]);
    expect(researchEnds[0]?.payload).toMatchObject({ result: { data: { content: "notes on x" } } });
  });

  // The test's own expect: expect.poll needs it in a concurrent test.
  it("the refusal stops only its own thread: another thread on the same handler goes on meanwhile", async ({
    onTestFinished,
    expect,
  }) => {
    const path = join(scratch, "threads.db");
    await crashInChild("agent:send-in-flight", path);
    const store = await openLedger(path, onTestFinished);
    const saver = new HeldSaver({ store });
    const tools = world();
    const { agent, handler, model } = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: RUN,
      tools: tools.tools,
      answer: script,
      middleware: () => [],
      checkpointer: saver,
    });

    const resumed = agent
      .invoke(null, threadConfig(handler, "thread-1"))
      .catch((caught: unknown) => caught);
    // send is refused; thread 1 waits for its tools' writes to be saved.
    await expect.poll(() => keptBy(handler).refusedThreads).toBe(1);

    // Thread 2, a new conversation on the same handler meanwhile, is not stopped.
    const other = await agent.invoke(GO, threadConfig(handler, "thread-2"));
    expect(other.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(model.calls).toBe(2);

    saver.release();
    expect(findLedgerError(await resumed, "unresolved-attempt")).toBeDefined();
    // Thread 1's model was not called: both calls were thread 2's.
    expect(model.calls).toBe(2);
    // The refusal is forgotten with the invocation it stopped.
    expect(keptBy(handler).refusedThreads).toBe(0);
  });
});
