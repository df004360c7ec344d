import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { compiledBeside, killAtMarker, scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { restoreMessages } from "./restore-messages.js";
import { ChildEffects, CRASH } from "./testing/crash-point.js";
import { openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import { fanoutGraph, RUN, SESSION, THREAD } from "./testing/send-fanout.test.data.js";

const scratch = scratchDirectory("langchain-send-fanout-", { beforeAll, afterAll });
// Compiled beside this file's compiled copy: build (`tsc -b`) after changing the adapter.
const CHILD = compiledBeside("./testing/send-fanout.test.child.js", import.meta.url);
const address = { sessionId: SESSION, runId: RUN };
const ABANDONED = "card declined: not charged";

/**
 * One crash for every test (a child loads LangChain for about a second): the child's model
 * asked for charge 1, 2 and 3 as three Send tasks beside three `summarize` model calls, and
 * was killed (SIGKILL) inside charge 2 with summarize 2 in flight, the other four tasks done
 * and saved. Each test resumes its own copy of that ledger.
 */
let crashed: Promise<{ path: string; effects: ChildEffects }> | undefined;
function crashedLedger() {
  crashed ??= (async () => {
    const path = join(scratch, "crashed.db");
    const { stdout } = await killAtMarker([CHILD, path], CRASH);
    return { path, effects: new ChildEffects(stdout) };
  })();
  return crashed;
}

/**
 * A copy of the crashed ledger, resumed once (`invoke(null)`, which stops at charge 2: not
 * idempotent, in flight), then charge 2 abandoned by a person who found it was not made. What
 * this process pays or charges is counted in `paid`, the child's part in `child`.
 */
async function abandonedAfterResume(name: string, onTestFinished: TestContext["onTestFinished"]) {
  const { path: original, effects: child } = await crashedLedger();
  const path = join(scratch, `${name}.db`);
  for (const suffix of ["", "-wal", "-shm"])
    if (existsSync(original + suffix)) copyFileSync(original + suffix, path + suffix);
  const store = await openLedger(path, onTestFinished);
  const paid = new Map<string, number>();
  const effect = (what: string) => paid.set(what, (paid.get(what) ?? 0) + 1);
  /** A new process's graph and config on the run. */
  const resume = () => {
    const handler = new LedgerCallbackHandler({ store, ...address });
    return { graph: fanoutGraph(store, { effect }), config: threadConfig(handler, THREAD) };
  };
  const first = resume();
  const stopped = await first.graph.invoke(null, first.config).catch((error: unknown) => error);
  expect(findLedgerError(stopped, "unresolved-attempt")?.details).toMatchObject({
    toolCallId: "call-2",
  });
  const person = await SessionRecorder.resume({
    store,
    ...address,
    actor: { type: "human", id: "ops" },
  });
  const unresolved = (await inspectSession(store, SESSION)).unresolved;
  const charge2 = unresolved.find((attempt) => attempt.toolCallId === "call-2");
  if (!charge2) throw new Error("expected charge 2 unresolved");
  await person.abandon(charge2, ABANDONED);
  const charges = (amount: number) =>
    child.count(`charge ${amount}`) + (paid.get(`charge ${amount}`) ?? 0);
  return { store, child, paid, resume, charges };
}

async function toolRequests(store: EventStore) {
  return (await runEvents(store, SESSION, RUN))
    .filter((event) => event.type === "tool.requested")
    .map((event) => (event.payload as { toolCallId: string }).toolCallId);
}

describe("a Send fan-out (createAgent's kind of tool dispatch) killed inside a charge", () => {
  it("the crash left charge 2 and summarize 2 in flight, the rest done", async () => {
    const { effects } = await crashedLedger();
    expect(
      [
        "agent",
        "charge 1",
        "charge 2",
        "charge 3",
        "summarize 1",
        "summarize 2",
        "summarize 3",
      ].map((what) => effects.count(what)),
    ).toEqual([1, 1, 1, 1, 1, 1, 1]);
  });

  it("restoreMessages gives the agent's turn: each charge's outcome (the abandoned one's reason), none pending", async ({
    onTestFinished,
  }) => {
    const { store } = await abandonedAfterResume("restore", onTestFinished);
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    // Anchored on the agent's turn, not on the summarize call that completed last.
    expect(restored.messages.slice(0, 2).map((message) => [message.type, message.content])).toEqual(
      [
        ["human", "pay"],
        ["ai", ""],
      ],
    );
    expect(restored.toolMessages.map((message) => [message.tool_call_id, message.content])).toEqual(
      [
        ["call-1", "charged 1"],
        [
          "call-2",
          `This tool call did not finish (a crash or an abort cut it off) and was not run again: ${ABANDONED}`,
        ],
        ["call-3", "charged 3"],
      ],
    );
    expect(restored.pendingToolCalls).toEqual([]);
  });

  it("a call the turn asks for again in the same resume (Send task and tools node) is answered from the ledger, never charged again", async ({
    onTestFinished,
  }) => {
    const { store, resume, charges } = await abandonedAfterResume("repeat", onTestFinished);
    // The tools node asks for all three calls of the turn (no ToolMessage given), beside the
    // three Send tasks LangGraph runs again: each call is asked for twice in this process.
    const { graph, config } = resume();
    const stopped = await graph
      .invoke(new Command({ goto: "tools" }), config)
      .catch((error: unknown) => error);
    // Refused (the callback cannot answer a completed or abandoned call), not run.
    expect(findLedgerError(stopped, "unresolved-attempt")).toBeDefined();
    expect([1, 2, 3].map(charges)).toEqual([1, 1, 1]);
    // The ledger holds the three calls of the turn, no new one.
    expect((await toolRequests(store)).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("the recipe for graphs with parallel tasks: the missing results as the tools node's update, then invoke(null)", async ({
    onTestFinished,
  }) => {
    const { store, paid, resume, charges } = await abandonedAfterResume("recipe", onTestFinished);
    // The first resume ran the summarize call cut off by the crash again (a model call), once.
    expect(paid.get("summarize 2")).toBe(1);
    const { graph, config } = resume();
    const { toolMessages, pendingToolCalls } = await restoreMessages(store, address, {
      threadId: THREAD,
    });
    expect(pendingToolCalls).toEqual([]);
    // The results the checkpoint holds already (tasks that finished before the crash) are not
    // given twice.
    const messages: BaseMessage[] = (await graph.getState(config)).values.messages;
    const turn = messages.findLastIndex((message) => AIMessage.isInstance(message));
    const given = new Set(
      messages
        .slice(turn + 1)
        .filter((message) => ToolMessage.isInstance(message))
        .map((message) => (message as ToolMessage).tool_call_id),
    );
    expect([...given].sort()).toEqual(["call-1", "call-3"]);
    await graph.updateState(
      config,
      { messages: toolMessages.filter((message) => !given.has(message.tool_call_id)) },
      "tools",
    );
    const result = await graph.invoke(null, config);

    // The model got each charge's outcome once, the abandoned one's reason included.
    const results = result.messages.filter((message) => ToolMessage.isInstance(message));
    expect(results.map((message) => (message as ToolMessage).tool_call_id).sort()).toEqual([
      "call-1",
      "call-2",
      "call-3",
    ]);
    expect(String(result.messages.at(-1)?.content)).toContain(ABANDONED);
    // Nothing charged or paid again: the summaries saved before the crash are kept.
    expect([...result.summaries].sort()).toEqual(["summary of 1", "summary of 2", "summary of 3"]);
    expect([1, 2, 3].map(charges)).toEqual([1, 1, 1]);
    expect(Object.fromEntries(paid)).toEqual({ "summarize 2": 1, agent: 1 });
    expect((await toolRequests(store)).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });
});
