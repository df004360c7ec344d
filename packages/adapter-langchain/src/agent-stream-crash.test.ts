import { join } from "node:path";
import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN, SESSION, streamedAgent } from "./testing/agent-stream-crash.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";

const scratch = scratchDirectory("langchain-agent-stream-", { beforeAll, afterAll });

describe("a createAgent read through streamEvents, SIGKILLed mid-stream of its model call", () => {
  it("is shown with the model call in flight; resumed, the call is made again as its retry and each tool runs once", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "ledger.db");
    const crashed = await crashInChild("agent-stream:crash-mid-stream", path);
    expect([crashed.count("model"), crashed.count("lookup"), crashed.count("send")]).toEqual([
      1, 0, 0,
    ]);
    const store = await openLedger(path, onTestFinished);
    const before = await inspectSession(store, SESSION);
    expect(before.unresolved.map((attempt) => [attempt.runId, attempt.kind])).toEqual([
      [RUN, "model"],
    ]);

    // A new process streams the resume by `stream` (its states: the model is not streamed).
    const { agent, config, handler, effects } = streamedAgent(store);
    let last: unknown;
    for await (const chunk of await agent.stream(null, { ...config, streamMode: "values" }))
      last = chunk;
    expect((last as { messages: { content: unknown }[] }).messages.at(-1)?.content).toBe(
      "final: value of x | sent to bob",
    );
    expect(effects).toEqual({ lookup: 1, send: 1 });
    await handler.completeRun();

    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    const run = runs.find((view) => view.runId === RUN);
    expect(run?.status).toBe("completed");
    const attempts = (run?.steps ?? []).map((step) => [
      step.kind,
      step.attempts.map((attempt) => attempt.status),
    ]);
    // The same request again: a retry of the attempt the crash cut off, which it supersedes.
    expect(attempts).toEqual([
      ["model", ["requested", "completed"]],
      ["tool", ["completed"]],
      ["tool", ["completed"]],
      ["model", ["completed"]],
    ]);
    const [cutOff, retry] = run?.steps[0]?.attempts ?? [];
    expect(retry?.retryOf).toBe(cutOff?.attemptId);
  });
});
