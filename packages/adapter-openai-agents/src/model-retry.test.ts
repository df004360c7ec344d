import {
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { Runner, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ledgerModelProvider, resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { retryingAgent } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

// Crashes are real: a child process SIGKILLed at the scenario's crash point.
const ledgers = new CrashedLedgers("oa-model-retry-", { beforeAll, afterAll });

describe("model calls the runner retries (modelSettings.retry)", () => {
  test("a retry is a new attempt of the same step, with retryOf", async () => {
    const store = new MemoryEventStore();
    const { model, agent } = retryingAgent();
    const result = await runWithLedger(agent, "price?", runOptions(store, model));
    expect(result.status).toBe("completed");
    const [root] = (await inspectSession(store, "s")).runs;
    const models = root?.steps.filter((step) => step.kind === "model") ?? [];
    expect(models.map((step) => step.attempts.map((attempt) => attempt.status))).toEqual([
      ["failed", "completed"],
      ["completed"],
    ]);
    const [failed, retried] = models[0]?.attempts ?? [];
    expect(retried?.retryOf).toBe(failed?.attemptId);
    // The retry's request carries the call's metadata, as the first attempt's does.
    const requested = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "model.requested",
    );
    expect(requested.map((event) => event.metadata?.stream)).toEqual([false, false, false]);
  });

  test("a retry is recognised when the recorder's redaction changes the request", async () => {
    // The recorded request (and its hash) is the redacted one; the runner retries with the
    // request as built. Compared as recorded, the retry is still the same call.
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "root",
      actor: { type: "agent", id: "test" },
      redact: ["request.systemInstructions"],
    });
    await recorder.startRun();
    const { model, agent } = retryingAgent();
    // Not hex and not an id: the events' hashes and uuids cannot hold it by chance.
    agent.instructions = "the secret is sk-NOT-HEX-swordfish";
    const runner = new Runner({
      modelProvider: ledgerModelProvider(scriptedProvider(model), { recorder }),
    });
    const result = await runner.run(agent, "price?");
    expect(result.finalOutput).toBe("done");
    const requested = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "model.requested",
    );
    expect(JSON.stringify(requested)).not.toContain("swordfish");
    for (const event of requested)
      expect(
        (event.payload as { request: { systemInstructions?: unknown } }).request,
      ).toMatchObject({ systemInstructions: "[redacted]" });
    expect(requested).toHaveLength(3);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
    expect(requested[1]?.stepId).toBe(requested[0]?.stepId);
  });

  test("a resumed run counts the failed request in its usage, as the run it continues did", async () => {
    const plain = retryingAgent();
    const expected = await new Runner({ modelProvider: scriptedProvider(plain.model) }).run(
      plain.agent,
      "price?",
    );
    expect(expected.state.usage.requests).toBe(3);

    // The process dies right after its tool completed: the retried call is in the ledger.
    const { store } = await ledgers.crashed("retrying: dies after its tool completed");
    const second = retryingAgent();
    second.model.calls = 2; // only the last turn is live
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(result.state?.usage.requests).toBe(expected.state.usage.requests);
    expect(result.state?.usage.totalTokens).toBe(expected.state.usage.totalTokens);
    // The ledger records each physical call once.
    const models = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "model.requested",
    );
    expect(models).toHaveLength(3);
  });
});
