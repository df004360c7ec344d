import { join } from "node:path";
import { findLedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { agentFor, GO, RUN, SESSION, script, world } from "./testing/agent.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { ledgerAgent, runEvents, threadConfig } from "./testing/helpers.js";
import {
  RUN as MAIL_RUN,
  mail,
  mailAgent,
  NEXT_RUN,
  THREAD,
} from "./testing/other-run-calls.test.data.js";
import {
  RUN as SUBGRAPH_RUN,
  SESSION as SUBGRAPH_SESSION,
  THREAD as SUBGRAPH_THREAD,
  subgraphWorld,
} from "./testing/subgraph-restore.test.data.js";
import {
  RUN as TOOL_NODE_RUN,
  SESSION as TOOL_NODE_SESSION,
  world as toolNodeWorld,
} from "./testing/tool-node.test.data.js";

const scratch = scratchDirectory("langchain-other-run-", { beforeAll, afterAll });
const TYPO = `${RUN}-typo`;

describe.concurrent("a thread resumed under another run than the one that recorded it", () => {
  it("a mistyped runId is refused before the tool runs again; the right one resumes as before", async ({
    onTestFinished,
  }) => {
    // The process dies inside send (not idempotent), its message out, lookup recorded.
    const path = join(scratch, "typo.db");
    const crashed = await crashInChild("agent:send-in-flight", path);
    expect(crashed.count("send")).toBe(1);
    const store = await openLedger(path, onTestFinished);

    // Resumed with a runId the session does not have: a new run, which must not take the call.
    const reads = vi.spyOn(store, "readSession");
    const typo = world();
    const wrong = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: TYPO,
      tools: typo.tools,
      answer: script,
    });
    const error = await wrong.agent
      .invoke(null, threadConfig(wrong.handler))
      .catch((caught: unknown) => caught);
    const refusal = findLedgerError(error, "invalid-argument");
    expect(refusal?.path).toBe("$.runId");
    expect(refusal?.details).toMatchObject({
      runId: RUN,
      handlerRunId: TYPO,
      threadId: "thread-1",
    });
    expect(refusal?.message).toContain(`Build the handler with runId "${RUN}"`);
    expect(refusal?.message).toContain("(a mistyped runId?)");
    expect(typo.effects).toEqual({ lookup: 0, send: 0 });
    expect(wrong.model.calls).toBe(0);
    // The session was read once, for every call of the resumed step, not once per call.
    expect(reads).toHaveBeenCalledTimes(1);
    const typoEvents = await runEvents(store, SESSION, TYPO);
    expect(typoEvents.filter((event) => event.type === "tool.requested")).toEqual([]);
    // The new run holds no call. Named by the handler's runId, it stays open (the same typo
    // again is refused the same way), and the refusal says so and how to close it.
    expect(refusal?.message).toContain(`run ${TYPO} is new and holds no call; it is left open`);
    expect(refusal?.message).toContain("handler.cancelRun(");
    expect(refusal?.details.newRun).toBe("left open");

    // With the right runId the run resumes as before: send, in flight, waits for a person.
    reads.mockClear();
    const right = world();
    const resumed = agentFor(store, right.tools);
    const stopped = await resumed.agent
      .invoke(null, threadConfig(resumed.handler))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(stopped, "unresolved-attempt")?.details.name).toBe("send");
    expect(right.effects.send).toBe(0);
    // A run that recorded the thread's turn does not read the session: lookup, completed before
    // LangGraph saved its write, is answered from the ledger, and only for such a call is the
    // session's tail read once (after the completion that asked for it: did another run record
    // a later turn of the thread with the same ids?).
    expect(reads).toHaveBeenCalledTimes(1);
    expect(reads.mock.calls[0]?.[0].after).toBeGreaterThan(0);
  });

  it("a plain graph resumed by a handler without a runId: refused, and the new run it started is closed", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "no-run-id.db");
    await crashInChild("tool-node:crash-in-send", path);
    const store = await openLedger(path, onTestFinished);
    const before = await store.listRuns(TOOL_NODE_SESSION);

    const run = toolNodeWorld(store, { sent: 1 });
    const handler = new LedgerCallbackHandler({ store, sessionId: TOOL_NODE_SESSION });
    const error = await run
      .graph({ handleToolErrors: false })
      .invoke(null, threadConfig(handler))
      .catch((caught: unknown) => caught);
    const refusal = findLedgerError(error, "invalid-argument");
    expect(refusal?.details).toMatchObject({ runId: TOOL_NODE_RUN, newRun: "closed" });
    expect(run.effects.sent).toBe(1);
    const newRunId = (await handler.getRecorder()).runId;
    expect(refusal?.message).toContain(`run ${newRunId} is new and holds no call: it is closed`);
    // No runId was given, so none was mistyped: the refusal says what happened.
    expect(refusal?.message).not.toContain("mistyped");
    expect(refusal?.message).toContain("this handler was built without a runId");
    expect(refusal?.message).toContain(`Build the handler with runId "${TOOL_NODE_RUN}"`);
    const after = await store.listRuns(TOOL_NODE_SESSION);
    expect(after.map((summary) => [summary.runId, summary.status])).toEqual([
      ...before.map((summary) => [summary.runId, summary.status]),
      [newRunId, "cancelled"],
    ]);
  });

  it("a handler given a recorder on a new run: the refusal says so, and how to give it the right one", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "recorder.db");
    await crashInChild("tool-node:crash-in-send", path);
    const store = await openLedger(path, onTestFinished);
    const run = toolNodeWorld(store, { sent: 1 });
    const recorder = new SessionRecorder({
      store,
      sessionId: TOOL_NODE_SESSION,
      actor: { type: "agent", id: "mine" },
    });
    const handler = new LedgerCallbackHandler({ recorder });
    const error = await run
      .graph({ handleToolErrors: false })
      .invoke(null, threadConfig(handler))
      .catch((caught: unknown) => caught);
    const refusal = findLedgerError(error, "invalid-argument");
    expect(refusal?.details).toMatchObject({ runId: TOOL_NODE_RUN, handlerRunId: recorder.runId });
    expect(refusal?.message).not.toContain("mistyped");
    expect(refusal?.message).toContain("the recorder given to this handler is on another run");
    expect(refusal?.message).toContain(
      `recorder on run "${TOOL_NODE_RUN}" (SessionRecorder.resume)`,
    );
    expect(run.effects.sent).toBe(1);
  });

  it("a call of a subgraph's child run: the refusal names the handler's run to resume, not the child run", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "subgraph.db");
    await crashInChild("subgraph-restore:crash-in-send", path);
    const store = await openLedger(path, onTestFinished);
    const sent: string[] = [];
    const { graph } = subgraphWorld(store, { effect: (what) => sent.push(what) });
    const handler = new LedgerCallbackHandler({
      store,
      sessionId: SUBGRAPH_SESSION,
      runId: `${SUBGRAPH_RUN}-typo`,
    });
    const error = await graph
      .invoke(null, threadConfig(handler, SUBGRAPH_THREAD))
      .catch((caught: unknown) => caught);
    const refusal = findLedgerError(error, "invalid-argument");
    expect(refusal?.path).toBe("$.runId");
    // A handler is built with the run it records in, whose subgraphs' child runs it opens.
    expect(refusal?.details.runId).toBe(SUBGRAPH_RUN);
    expect(refusal?.details.handlerRunId).toBe(`${SUBGRAPH_RUN}-typo`);
    expect(refusal?.message).toMatch(
      new RegExp(
        `recorded in run ${SUBGRAPH_RUN} \\(in ${SUBGRAPH_RUN}>${SUBGRAPH_THREAD}>research:[^ ]+, a LangGraph subgraph's child run of it\\)`,
      ),
    );
    expect(refusal?.message).toContain(`Build the handler with runId "${SUBGRAPH_RUN}"`);
    expect(sent.filter((what) => what === "sent")).toEqual([]);
  });

  it("a new run on a thread an open run used, with the same tool call ids, runs its own calls", async () => {
    const store = new MemoryEventStore();
    const reads = vi.spyOn(store, "readSession");
    const before = world();
    const first = agentFor(store, before.tools);
    await first.agent.invoke(GO, threadConfig(first.handler));
    // Another run (left open) on the same thread, asked again: its model asks for the same ids.
    const after = world();
    const next = ledgerAgent({
      store,
      sessionId: SESSION,
      runId: "next-run",
      tools: after.tools,
      // Each user message starts a turn asking for the tools again, with the same ids.
      answer: (messages) =>
        HumanMessage.isInstance(messages.at(-1)) ? script([]) : script(messages.slice(-2)),
    });
    const result = await next.agent.invoke(GO, threadConfig(next.handler));
    expect(result.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(after.effects).toEqual({ lookup: 1, send: 1 });
    expect(reads).not.toHaveBeenCalled();
  });

  it("a call without a tool call id (a model that gives empty ids) is refused under a mistyped runId too", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "empty-id.db");
    const crashed = await crashInChild("other-run-calls:send-in-flight", path, "");
    expect(crashed.count("send:bob")).toBe(1);
    const store = await openLedger(path, onTestFinished);

    const typo = mail();
    const wrong = mailAgent(store, { runId: TYPO, id: "", tools: typo.tools });
    const error = await wrong.agent
      .invoke(null, threadConfig(wrong.handler, THREAD))
      .catch((caught: unknown) => caught);
    const refusal = findLedgerError(error, "invalid-argument");
    expect(refusal?.path).toBe("$.runId");
    expect(refusal?.details).toMatchObject({ runId: MAIL_RUN, threadId: THREAD, name: "send" });
    expect(typo.sent).toEqual([]);

    // The right runId: send, in flight, waits for a person.
    const right = mail();
    const resumed = mailAgent(store, { runId: MAIL_RUN, id: "", tools: right.tools });
    const stopped = await resumed.agent
      .invoke(null, threadConfig(resumed.handler, THREAD))
      .catch((caught: unknown) => caught);
    expect(findLedgerError(stopped, "unresolved-attempt")?.details.name).toBe("send");
    expect(right.sent).toEqual([]);
  });

  for (const [label, second] of [
    ["the same arguments", "bob"],
    ["other arguments", "carol"],
  ] as const) {
    it(`a thread whose next turn another run recorded is refused under the earlier run's runId (${label})`, async ({
      onTestFinished,
    }) => {
      // Turn 1 under MAIL_RUN (done), turn 2 under NEXT_RUN, the same id: dies inside its send.
      const path = join(scratch, `next-turn-${second}.db`);
      const crashed = await crashInChild("other-run-calls:next-run-in-flight", path, "bob", second);
      expect(crashed.count(`send:${second}`)).toBe(second === "bob" ? 2 : 1);
      const store = await openLedger(path, onTestFinished);

      // Resumed under the run of turn 1: turn 2's send is no call of it (not turn 1's answer).
      const wrongWorld = mail();
      const wrong = mailAgent(store, { runId: MAIL_RUN, id: "call_1", tools: wrongWorld.tools });
      const error = await wrong.agent
        .invoke(null, threadConfig(wrong.handler, THREAD))
        .catch((caught: unknown) => caught);
      const refusal = findLedgerError(error, "invalid-argument");
      expect(refusal?.path).toBe("$.runId");
      expect(refusal?.details).toMatchObject({ runId: NEXT_RUN, handlerRunId: MAIL_RUN });
      // MAIL_RUN is the right run of turn 1, not a mistyped one: the refusal says so.
      expect(refusal?.message).not.toContain("mistyped");
      expect(refusal?.message).toContain("that run recorded a later turn of the thread");
      expect(wrongWorld.sent).toEqual([]);

      // Under the run that recorded turn 2: its send, in flight, waits for a person.
      const rightWorld = mail();
      const right = mailAgent(store, { runId: NEXT_RUN, id: "call_1", tools: rightWorld.tools });
      const stopped = await right.agent
        .invoke(null, threadConfig(right.handler, THREAD))
        .catch((caught: unknown) => caught);
      expect(findLedgerError(stopped, "unresolved-attempt")?.details.name).toBe("send");
      expect(rightWorld.sent).toEqual([]);
    });
  }
});
