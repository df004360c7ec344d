import { join } from "node:path";
import { inspectSession, type LedgerEvent } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RUN as AGENT_RUN,
  SESSION as AGENT_SESSION,
  agentFor,
  askToRemember,
  rememberTool,
} from "./testing/agent.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import {
  FIRST,
  RUN,
  SECOND,
  SESSION,
  threadsAgent,
  world,
} from "./testing/tool-call-threads.test.data.js";

const scratch = scratchDirectory("langchain-threads-", { beforeAll, afterAll });

/** The thread an event was recorded in, if any. */
function threadOf(event: LedgerEvent): string | undefined {
  return (event.metadata?.langchain as { threadId?: string } | undefined)?.threadId;
}

describe("one handler serving two LangGraph threads whose models give the same tool call ids", () => {
  it("after a crash in the second thread, each thread resumes with its own recorded calls", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "threads.db");
    const crashed = await crashInChild("tool-call-threads:second-crashes", path);
    expect(crashed.count(`send:${FIRST}`)).toBe(1);
    expect(crashed.count(`send:${SECOND}`)).toBe(1);

    // A new process resumes both threads on one handler of the same run.
    const store = await openLedger(path, onTestFinished);
    const resumedWorld = world();
    const { agent, handler } = threadsAgent(store, resumedWorld.tools);
    const second = await agent.invoke(null, threadConfig(handler, SECOND));
    const first = await agent.invoke(null, threadConfig(handler, FIRST));

    // Each thread gets its own results: the second thread's send is answered from the ledger
    // (it was re-asked: its write was not saved), each lookup in flight runs again.
    expect(second.messages.at(-1)?.content).toBe(
      `${SECOND}: sent to ${SECOND} | value of ${SECOND}`,
    );
    expect(first.messages.at(-1)?.content).toBe(`${FIRST}: sent to ${FIRST} | value of ${FIRST}`);
    // The non-idempotent send ran exactly once per thread, in all.
    expect(resumedWorld.sent).toEqual([]);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);

    // Each tool call is recorded with its thread, caused by its own thread's completion.
    const events = await runEvents(store, SESSION, RUN);
    const completions = new Map(
      events
        .filter((event) => event.type === "model.requested")
        .map((event) => [event.attemptId, threadOf(event)]),
    );
    const causeThread = new Map(
      events
        .filter((event) => event.type === "model.completed")
        .map((event) => [event.eventId, completions.get(event.attemptId)]),
    );
    const requested = events.filter((event) => event.type === "tool.requested");
    const named = (name: string) =>
      requested.filter((event) => (event.payload as { name: string }).name === name);
    // One send request per thread: the second thread's, asked again, was answered, not retried.
    expect(named("send").map(threadOf)).toEqual([FIRST, SECOND]);
    // Each lookup in flight at the crash was retried in its own thread.
    const lookups = named("lookup");
    expect(lookups.map(threadOf)).toEqual([FIRST, SECOND, SECOND, FIRST]);
    for (const retry of lookups.slice(2)) {
      const retried = lookups.find((event) => event.attemptId === retry.retryOf);
      expect(retried && threadOf(retried)).toBe(threadOf(retry));
    }
    for (const event of requested) {
      const args = (event.payload as { args: { to?: string; key?: string } }).args;
      expect(threadOf(event)).toBe(args.to ?? args.key);
      expect(causeThread.get(String(event.causedByEventId))).toBe(threadOf(event));
    }
  });

  it("a ledger written before threads were recorded resumes as before", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "without-threads.db");
    const crashed = await crashInChild("tool-call-threads:without-threads", path);
    expect(crashed.count("remember")).toBe(1);
    const store = await openLedger(path, onTestFinished);
    const recorded = await runEvents(store, AGENT_SESSION, AGENT_RUN);
    expect(recorded.some((event) => threadOf(event) !== undefined)).toBe(false);

    let runs = 0;
    const resumed = agentFor(store, [rememberTool(() => runs++)], askToRemember);
    const result = await resumed.agent.invoke(null, threadConfig(resumed.handler));
    // Matched by toolCallId alone, as before: answered from the ledger, not run again.
    expect(runs).toBe(0);
    expect(result.messages.at(-1)?.content).toBe("final: saved x");
  });
});
