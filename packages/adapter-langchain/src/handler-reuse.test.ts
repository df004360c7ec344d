import { join } from "node:path";
import {
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import {
  abortedInsideSend,
  agentFor,
  GO,
  personDecides,
  RUN,
  SESSION,
  world,
} from "./testing/agent.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";

const scratch = scratchDirectory("langchain-handler-reuse-", { beforeAll, afterAll });

/** `invoke`'s answer, or the code of the ledger error it stopped with. */
function settled(run: Promise<{ messages: { content: unknown }[] }>) {
  return run.then(
    (result) => ({ answer: String(result.messages.at(-1)?.content) }),
    (error: unknown) => {
      const refusal = findLedgerError(error);
      if (!refusal) throw error;
      return { refused: refusal.code };
    },
  );
}

// Concurrent: a crash test mostly waits for its child; each test has its own ledger.
describe.concurrent("a handler reused after a person decided (README: Resolving an unresolved tool call)", () => {
  for (const decision of ["abandon", "approve"] as const)
    it(`after a crash, the handler the resume stopped on goes on once a person decides (${decision})`, async ({
      onTestFinished,
    }) => {
      const path = join(scratch, `crash-${decision}.db`);
      const crashed = await crashInChild("agent:send-in-flight", path);
      const store = await openLedger(path, onTestFinished);
      const resumed = world();
      const { agent, handler } = agentFor(store, resumed.tools);
      expect(await settled(agent.invoke(null, threadConfig(handler)))).toEqual({
        refused: "unresolved-attempt",
      });

      await personDecides(store, decision, "checked the outbox");
      const again = await settled(agent.invoke(null, threadConfig(handler)));
      expect(again).toEqual({
        answer:
          decision === "abandon"
            ? expect.stringContaining("checked the outbox")
            : "final: value of x | sent to bob",
      });
      expect(crashed.count("send") + resumed.effects.send).toBe(decision === "abandon" ? 1 : 2);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

  it("a call cut off by aborting the run: the same handler refuses it, then answers the person's decision", async () => {
    const store = new MemoryEventStore();
    // Aborted while send runs: send goes on (the message goes out), the ledger cannot know.
    const { agent, handler, effects, block } = await abortedInsideSend(store);
    block(async () => {});
    expect(effects.send).toBe(1);

    // As a new process would: the call in flight is not run again until a person decides.
    expect(await settled(agent.invoke(null, threadConfig(handler)))).toEqual({
      refused: "unresolved-attempt",
    });
    expect(effects.send).toBe(1);
    await personDecides(store, "abandon", "the message went out");
    expect(await settled(agent.invoke(null, threadConfig(handler)))).toEqual({
      answer: expect.stringContaining("the message went out"),
    });
    expect(effects.send).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it("anything else another writer appended to the run still fails with conflict", async () => {
    const store = new MemoryEventStore();
    const { tools } = world();
    const { agent, handler } = agentFor(store, tools);
    await agent.invoke(GO, threadConfig(handler));
    // Another process continues the run (a second agent process, a mistaken runId...).
    const other = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "agent", id: "other" },
    });
    await other.record({ type: "x.other.note", payload: { note: "not a decision" } });
    for (let invoke = 0; invoke < 2; invoke++)
      expect(await settled(agent.invoke(GO, threadConfig(handler, "thread-2")))).toEqual({
        refused: "conflict",
      });
  });
});

describe("invocations that follow one that ended well", () => {
  it("read nothing from the store first: a handler given to a model costs no read per call", async () => {
    const store = new MemoryEventStore();
    let heads = 0;
    const runHead = store.runHead.bind(store);
    store.runHead = (...args) => {
      heads++;
      return runHead(...args);
    };
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = new FakeListChatModel({ responses: ["a", "b", "c", "d"] });
    await model.invoke("first", { callbacks: [handler] });
    const afterFirst = heads;
    for (const prompt of ["second", "third", "fourth"])
      await model.invoke(prompt, { callbacks: [handler] });
    expect(heads).toBe(afterFirst);
    expect((await inspectSession(store, SESSION)).runs[0]?.steps).toHaveLength(4);
  });
});
