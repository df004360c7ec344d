import { join } from "node:path";
import { type EventStore, findLedgerError, MemoryEventStore } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { rejection, scratchDirectory, seenByCaller } from "@agent-ledger/core/testing";
import { HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { askForLookup, flakyLookup, toolAttempts } from "./testing/flaky-lookup.test.data.js";
import { ledgerAgent, threadConfig, toolGraph } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("lc-tool-failure-resume-", { beforeAll, afterAll });

/** createAgent with ledgerMiddleware and the flaky tool; `agent()` is one process's agent. */
function flakyAgent(
  store: EventStore,
  options: Parameters<typeof flakyLookup>[0] & { idempotent: boolean; failures: number },
) {
  const { runs, lookup } = flakyLookup(options);
  const agent = (on = store) =>
    ledgerAgent({ store: on, sessionId: "s", runId: "r", tools: [lookup], answer: askForLookup });
  return { runs, agent };
}

/** A provider's rate limit, as its client throws it, with the socket error that caused it. */
function rateLimited(): Error {
  const socket = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
  return Object.assign(new Error("Rate limit reached", { cause: socket }), {
    name: "RateLimitError",
    status: 429,
    code: "rate_limit_exceeded",
  });
}

/** The agent's last message, or the error it stopped with. */
function outcome(run: Promise<{ messages: { content: unknown }[] }>) {
  return run.then(
    (result) => String(result.messages.at(-1)?.content),
    (error: unknown) => `error: ${(error as Error).message}`,
  );
}

// A tool's error that stops a createAgent agent leaves the tools node without saved writes, and
// LangGraph's way to try again is to invoke the thread with null: the node runs again.
describe("a tool that threw, met again when the graph is invoked again", () => {
  for (const resumedBy of ["same handler", "new handler"] as const)
    it(`declared idempotent, runs again as a retry of the failed attempt (${resumedBy})`, async () => {
      const store = new MemoryEventStore();
      const { runs, agent } = flakyAgent(store, { idempotent: true, failures: 2 });
      let { agent: graph, handler } = agent();
      const input = { messages: [new HumanMessage("go")] };
      expect(await outcome(graph.invoke(input, threadConfig(handler)))).toBe(
        "error: network down (1)",
      );
      if (resumedBy === "new handler") ({ agent: graph, handler } = agent());
      // Each invocation runs the tool once more: its own error, not the recorded one.
      expect(await outcome(graph.invoke(null as never, threadConfig(handler)))).toBe(
        "error: network down (2)",
      );
      if (resumedBy === "new handler") ({ agent: graph, handler } = agent());
      expect(await outcome(graph.invoke(null as never, threadConfig(handler)))).toBe(
        "done: found x",
      );
      expect(runs.count).toBe(3);
      // One step (the model asked once), three attempts, each a retry of the one before.
      const attempts = await toolAttempts(store, "s");
      expect(attempts.map(({ status, retried }) => ({ status, retried }))).toEqual([
        { status: "failed", retried: null },
        { status: "failed", retried: 0 },
        { status: "completed", retried: 1 },
      ]);
      expect(new Set(attempts.map((attempt) => attempt.step)).size).toBe(1);
      // Done, the answer is the ledger's from then on: the tool does not run again.
      if (resumedBy === "new handler") ({ agent: graph, handler } = agent());
      expect(await outcome(graph.invoke(null as never, threadConfig(handler)))).toBe(
        "done: found x",
      );
      expect(runs.count).toBe(3);
    });

  it("not declared idempotent, is answered with its recorded failure and does not run again", async () => {
    // It may have had its effect before it threw: running it again is for a person to allow
    // (declare it idempotent), or give the model its failure (restoreMessages' toolMessages).
    const store = new MemoryEventStore();
    const { runs, agent } = flakyAgent(store, { idempotent: false, failures: 1 });
    const { agent: graph, handler } = agent();
    await outcome(graph.invoke({ messages: [new HumanMessage("go")] }, threadConfig(handler)));
    expect(await outcome(graph.invoke(null as never, threadConfig(handler)))).toBe(
      "error: network down (1)",
    );
    expect(runs.count).toBe(1);
    expect(await toolAttempts(store, "s")).toEqual([
      { step: expect.any(Number), status: "failed", retried: null },
    ]);
  });

  it("not declared idempotent, stops the agent again with the error it threw: name, message, code, status and cause", async () => {
    const path = join(scratch, "rate-limited.db");
    const first = new SqliteEventStore({ path });
    await first.init();
    const { runs, agent } = flakyAgent(first, {
      idempotent: false,
      failures: 1,
      failWith: rateLimited,
    });
    const live = agent();
    const input = { messages: [new HumanMessage("go")] };
    const liveError = await rejection(live.agent.invoke(input, threadConfig(live.handler)));
    expect(seenByCaller(liveError)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    await first.close();

    // The next process: its own store on the file, its own handler.
    const second = new SqliteEventStore({ path });
    await second.init();
    try {
      const resumed = agent(second);
      const replayed = await rejection(
        resumed.agent.invoke(null as never, threadConfig(resumed.handler)),
      );
      expect(seenByCaller(replayed)).toEqual(seenByCaller(liveError));
      expect(runs.count).toBe(1);
    } finally {
      await second.close();
    }
  });
});

// A plain graph (ToolNode stopping on errors) recorded by the callback alone, which can refuse a
// call but not answer one.
describe("in a plain graph, a tool that threw, met again when the graph is invoked again", () => {
  function plainGraph(store: MemoryEventStore, options: { idempotent: boolean }) {
    const { runs, lookup } = flakyLookup({ ...options, failures: 1 });
    const graph = toolGraph(
      new ScriptedChatModel(askForLookup),
      [lookup],
      new LedgerCheckpointSaver({ store }),
      { handleToolErrors: false },
    );
    const handler = new LedgerCallbackHandler({ store, sessionId: "s", runId: "r" });
    return { runs, graph, handler };
  }

  it("declared idempotent, runs again as a retry", async () => {
    const store = new MemoryEventStore();
    const { runs, graph, handler } = plainGraph(store, { idempotent: true });
    await outcome(graph.invoke({ messages: [new HumanMessage("go")] }, threadConfig(handler)));
    expect(await outcome(graph.invoke(null, threadConfig(handler)))).toBe("done: found x");
    expect(runs.count).toBe(2);
    expect(
      (await toolAttempts(store, "s")).map(({ status, retried }) => ({ status, retried })),
    ).toEqual([
      { status: "failed", retried: null },
      { status: "completed", retried: 0 },
    ]);
  });

  it("not declared idempotent, is refused with its recorded error and the ways on", async () => {
    const store = new MemoryEventStore();
    const { runs, graph, handler } = plainGraph(store, { idempotent: false });
    await outcome(graph.invoke({ messages: [new HumanMessage("go")] }, threadConfig(handler)));
    const error = await graph.invoke(null, threadConfig(handler)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const refusal = findLedgerError(error, "unresolved-attempt");
    expect(refusal?.message).toMatch(
      /tool call lookup \(call-1\) was already failed \(network down \(1\)\) before the run was resumed/,
    );
    // Not "answer it from the ledger": answered so, the error would stop every invocation.
    expect(refusal?.message).toContain("Declare the tool idempotent if running it again is safe");
    expect(refusal?.message).toContain("restoreMessages' toolMessages");
    expect(runs.count).toBe(1);
  });
});
