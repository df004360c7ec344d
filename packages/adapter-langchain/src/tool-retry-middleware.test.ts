import { join } from "node:path";
import { findLedgerError, inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { toolAttempts } from "./testing/flaky-lookup.test.data.js";
import {
  firstInput,
  LETS_LEDGER_ERRORS_THROUGH,
  retryingAgent,
  SESSION,
} from "./testing/tool-retry.test.data.js";

const scratch = scratchDirectory("langchain-tool-retry-", { beforeAll, afterAll });

describe.concurrent("toolRetryMiddleware around ledgerMiddleware", () => {
  it("records each retry as a new attempt of the failed call's step, with retryOf", async () => {
    const store = new MemoryEventStore();
    const { runs, invoke } = retryingAgent(store, { idempotent: false, failures: 2 });
    expect(await invoke(firstInput())).toBe("done: found x");
    expect(runs.count).toBe(3);
    const attempts = await toolAttempts(store, SESSION);
    expect(attempts.map(({ status, retried }) => ({ status, retried }))).toEqual([
      { status: "failed", retried: null },
      { status: "failed", retried: 0 },
      { status: "completed", retried: 1 },
    ]);
    // One call, one step: each retry was a call of its own, in a step of its own.
    expect(new Set(attempts.map((attempt) => attempt.step)).size).toBe(1);
  });

  for (const idempotent of [false, true])
    it(`after a crash, answers the call from the retry that completed (${idempotent ? "" : "not "}idempotent)`, async ({
      onTestFinished,
    }) => {
      const path = join(scratch, `completed-${idempotent}.db`);
      // The retry completed, and the process died before LangGraph saved the tools node.
      const child = await crashInChild(
        "tool-retry-completed",
        path,
        idempotent ? "idempotent" : "",
      );
      expect(child.count("lookup")).toBe(2);
      const store = await openLedger(path, onTestFinished);
      const { runs, invoke } = retryingAgent(store, { idempotent, failures: 0 });
      // The graph runs the tools node again: the failure and its retry are answered from the
      // ledger. (Run again as a retry of the failure, an idempotent one ran a third time.)
      expect(await invoke(null)).toBe("done: found x");
      expect(runs.count).toBe(0);
      expect(
        (await toolAttempts(store, SESSION)).map(({ status, retried }) => ({ status, retried })),
      ).toEqual([
        { status: "failed", retried: null },
        { status: "completed", retried: 0 },
      ]);
    });

  it("after a crash inside a retry, stops at the call for a person (not idempotent), through a retry set as the README says", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "in-flight.db");
    const child = await crashInChild("tool-retry-in-flight", path, "");
    expect(child.count("lookup")).toBe(2);
    const store = await openLedger(path, onTestFinished);
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    const { runs, invoke } = retryingAgent(store, {
      idempotent: false,
      failures: 0,
      retry: LETS_LEDGER_ERRORS_THROUGH,
    });
    const error = await invoke(null).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    // Not retried, nor handed to the model as the tool's error: the refusal stops the agent.
    expect(findLedgerError(error, "unresolved-attempt")?.details.attemptId).toBe(
      inFlight?.attemptId,
    );
    expect(runs.count).toBe(0);
    expect(
      (await toolAttempts(store, SESSION)).map(({ status, retried }) => ({ status, retried })),
    ).toEqual([
      { status: "failed", retried: null },
      { status: "requested", retried: 0 },
    ]);
  });

  it("after a crash inside a retry, runs an idempotent call once more, as a retry of the one cut off", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "in-flight-idempotent.db");
    await crashInChild("tool-retry-in-flight", path, "idempotent");
    const store = await openLedger(path, onTestFinished);
    const { runs, invoke } = retryingAgent(store, { idempotent: true, failures: 0 });
    expect(await invoke(null)).toBe("done: found x");
    expect(runs.count).toBe(1);
    expect(
      (await toolAttempts(store, SESSION)).map(({ status, retried }) => ({ status, retried })),
    ).toEqual([
      { status: "failed", retried: null },
      { status: "requested", retried: 0 },
      { status: "completed", retried: 1 },
    ]);
  });
});
