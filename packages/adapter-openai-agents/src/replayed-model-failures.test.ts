import {
  type AttemptView,
  type EventStore,
  inspectSession,
  type JsonObject,
  MemoryEventStore,
  readWholeSession,
  toAtif,
} from "@agent-ledger/core";
import { rejection, seenByCaller } from "@agent-ledger/core/testing";
import { Runner, setTracingDisabled, Usage } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { modelResponseToJson } from "./model-json.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { rateLimitedAgent } from "./testing/fixture.js";
import { appRecorder, runOptions, streamedRun } from "./testing/recorded-run.js";
import { message, scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

// Crashes are real: a child process SIGKILLed right after a model call's failure committed.
const ledgers = new CrashedLedgers("oa-replayed-failures-", { beforeAll, afterAll });
ledgers.prepare(
  "rate limited: dies after the failure was recorded",
  "rate limited, a retry left: dies after the failure was recorded",
  "rate limited, no retry left: dies after the last failure was recorded",
  "rate limited, retries left: dies after the second failure was recorded",
  "rate limited, a retry left, streamed: dies after the failure was recorded",
  "rate limited, retries left, streamed: dies after the second failure was recorded",
);

async function modelCallsRecorded(store: EventStore): Promise<number> {
  const events = await readWholeSession(store, "s");
  return events.filter((event) => event.type === "model.requested").length;
}

/** The attempts of each model step of run "root", as `agent-ledger inspect` shows them. */
async function modelSteps(store: EventStore): Promise<AttemptView[][]> {
  const [run] = (await inspectSession(store, "s")).runs;
  return (run?.steps ?? []).filter((step) => step.kind === "model").map((step) => step.attempts);
}

/**
 * The run holds one model step whose attempts ended as `statuses`, each the retry of the one
 * before it and retried by the one after it.
 */
async function expectOneRetriedStep(store: EventStore, statuses: string[]): Promise<void> {
  const steps = await modelSteps(store);
  expect(steps.map((attempts) => attempts.map((attempt) => attempt.status))).toEqual([statuses]);
  const attempts = steps[0] ?? [];
  attempts.forEach((attempt, index) => {
    expect(attempt.retryOf).toBe(attempts[index - 1]?.attemptId);
    expect(attempt.retriedBy).toBe(attempts[index + 1]?.attemptId);
  });
}

describe("a model call that failed is answered on resume with the error the caller saw", () => {
  test("a 429 rejects the resumed run with its name, message, code and status, the model not called", async () => {
    const live = rateLimitedAgent({ failures: 1 });
    const liveError = await rejection(
      runWithLedger(live.agent, "go", runOptions(new MemoryEventStore(), live.model)),
    );
    expect(seenByCaller(liveError)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });

    const { store } = await ledgers.crashed("rate limited: dies after the failure was recorded");
    const second = rateLimitedAgent({ failures: 1 });
    const replayed = await rejection(resumeRun(second.agent, runOptions(store, second.model)));
    expect(seenByCaller(replayed)).toEqual(seenByCaller(liveError));
    expect(second.model.calls).toBe(0);
    const [run] = (await inspectSession(store, "s")).runs;
    expect(run?.status).toBe("failed");
  });

  test("the runner's retry policy reads the replayed 429 as it read the live one: a retry it had left is made", async () => {
    // The process died waiting to retry the 429 (modelSettings.retry: one retry on 429).
    const { store } = await ledgers.crashed(
      "rate limited, a retry left: dies after the failure was recorded",
    );
    const second = rateLimitedAgent({ failures: 1, retries: 1 });
    second.model.calls = 1; // the failed call is answered from the ledger
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("done");
    expect(second.model.calls).toBe(2);
    // One call, retried once: the step holds the recorded failure and the retry made on resume,
    // as the run would have recorded it had the process not died.
    await expectOneRetriedStep(store, ["failed", "completed"]);
    // The trajectory shows one model call, not a failed call and another one.
    const agentSteps = (await toAtif(store, "s")).steps.filter((step) => step.source === "agent");
    expect(agentSteps.map((step) => step.message)).toEqual(["done"]);
  });

  test("streamed, the retry made on resume is recorded as the retry of the replayed failure", async () => {
    const { store } = await ledgers.crashed(
      "rate limited, a retry left, streamed: dies after the failure was recorded",
    );
    const second = rateLimitedAgent({ failures: 1, retries: 1 });
    second.model.calls = 1; // the failed call is answered from the ledger
    const result = await streamedRun(second, await appRecorder(store, "resume"));
    expect(result.finalOutput).toBe("done");
    expect(second.model.calls).toBe(2);
    await expectOneRetriedStep(store, ["failed", "completed"]);
  });

  test("a retry made on resume that completes counts every failed attempt in the usage, as a run with no crash", async () => {
    const plain = rateLimitedAgent({ failures: 2, retries: 3 });
    const expected = await new Runner({ modelProvider: scriptedProvider(plain.model) }).run(
      plain.agent,
      "go",
    );
    expect(expected.state.usage.requests).toBe(3);

    // Died waiting to retry the second failure: the first is answered by its retry, unseen.
    const { store } = await ledgers.crashed(
      "rate limited, retries left: dies after the second failure was recorded",
    );
    const second = rateLimitedAgent({ failures: 2, retries: 3 });
    second.model.calls = 2; // the failed calls are answered from the ledger
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.finalOutput).toBe("done");
    expect(result.state?.usage.requests).toBe(expected.state.usage.requests);
    expect(result.state?.usage.totalTokens).toBe(expected.state.usage.totalTokens);

    const streamed = await ledgers.crashed(
      "rate limited, retries left, streamed: dies after the second failure was recorded",
    );
    const third = rateLimitedAgent({ failures: 2, retries: 3 });
    third.model.calls = 2;
    const resumed = await streamedRun(third, await appRecorder(streamed.store, "resume"));
    expect(resumed.finalOutput).toBe("done");
    expect(resumed.state.usage.requests).toBe(expected.state.usage.requests);
    expect(resumed.state.usage.totalTokens).toBe(expected.state.usage.totalTokens);
  });

  test("a retry an earlier resume recorded as a call of its own is answered from the ledger", async () => {
    // What a resume wrote before the adapter linked such a retry to the replayed failure: the
    // retry as a new call (a step of its own, no retryOf), which completed.
    const { store } = await ledgers.crashed(
      "rate limited, a retry left: dies after the failure was recorded",
    );
    const [failed] = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "model.requested",
    );
    if (!failed) throw new Error("expected the failed call in the ledger");
    const { request } = failed.payload as { request: JsonObject };
    const earlier = await appRecorder(store, "resume");
    await earlier.beforeModelCall({ request, metadata: { stream: false } }); // the failure, replayed
    const retry = await earlier.beforeModelCall({ request, metadata: { stream: false } });
    const response = { output: [message("done")], usage: new Usage(), responseId: "resp_2" };
    await earlier.modelCompleted(retry, modelResponseToJson(response));

    const third = rateLimitedAgent({ failures: 1, retries: 1 });
    third.model.calls = 2; // both calls are answered from the ledger
    const result = await resumeRun(third.agent, runOptions(store, third.model));
    expect(result.finalOutput).toBe("done");
    expect(third.model.calls).toBe(2);
    expect(await modelCallsRecorded(store)).toBe(2);
  });

  test("killed twice waiting to retry, the call is attempted no more than maxRetries + 1 times", async () => {
    // 3 retries, every attempt a 429: the first process dies waiting to retry its second
    // failure, the resume after it dies waiting to retry the failure of its retry.
    const { store } = await ledgers.crashedTwice(
      "rate limited, retries left: dies after the second failure was recorded",
      "rate limited, retries left, resumed: dies after its retry's failure was recorded",
    );
    const third = rateLimitedAgent({ failures: 4, retries: 3 });
    third.model.calls = 3; // the three failed calls are answered from the ledger
    const replayed = await rejection(resumeRun(third.agent, runOptions(store, third.model)));
    expect(seenByCaller(replayed)).toMatchObject({ status: 429, code: "rate_limit_exceeded" });
    // The fourth attempt, the last one maxRetries allows, is the only call this process made.
    expect(third.model.calls).toBe(4);
    expect(await modelCallsRecorded(store)).toBe(4);
    await expectOneRetriedStep(store, ["failed", "failed", "failed", "failed"]);
  });

  test("a 429 that was the last retry live is not retried on resume: the run rejects with it, no call made", async () => {
    const live = rateLimitedAgent({ failures: 2, retries: 1 });
    const liveStore = new MemoryEventStore();
    const liveError = await rejection(
      runWithLedger(live.agent, "go", runOptions(liveStore, live.model)),
    );
    expect(live.model.calls).toBe(2);

    const { store } = await ledgers.crashed(
      "rate limited, no retry left: dies after the last failure was recorded",
    );
    const second = rateLimitedAgent({ failures: 2, retries: 1 });
    const replayed = await rejection(resumeRun(second.agent, runOptions(store, second.model)));
    expect(seenByCaller(replayed)).toEqual(seenByCaller(liveError));
    // The runner counts its attempts anew on resume: without the ledger's veto it would retry
    // the replayed 429 and call the model a third time, which the run it continues never did.
    expect(second.model.calls).toBe(0);
    expect(await modelCallsRecorded(store)).toBe(await modelCallsRecorded(liveStore));
  });
});
