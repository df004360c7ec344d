import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { rejection, seenByCaller } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { rateLimitedAgent } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: a child process SIGKILLed right after a model call's failure committed.
const ledgers = new CrashedLedgers("oa-replayed-failures-", afterAll);
ledgers.prepare(
  "rate limited: dies after the failure was recorded",
  "rate limited, a retry left: dies after the failure was recorded",
  "rate limited, no retry left: dies after the last failure was recorded",
);

async function modelCallsRecorded(store: EventStore): Promise<number> {
  const events = await readWholeSession(store, "s");
  return events.filter((event) => event.type === "model.requested").length;
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
