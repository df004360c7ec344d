import {
  type EventStore,
  inspectSession,
  readWholeSession,
  resolveEvents,
} from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun } from "./index.js";
import { PHONE_REJECTION } from "./testing/approval-crash-scenarios.test.data.js";
import {
  BAD_AND_CHARGE_THEN_CHARGE,
  BAD_BESIDE_CHARGE,
  BAD_THEN_CHARGE,
  chargingAgent,
} from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture, retryingAgent } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { LARGE_TEXT, savingAgent } from "./testing/saving-agent.js";

setTracingDisabled(true);

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts); the test is
// the new process that opens the file and resumes.
const ledgers = new CrashedLedgers("oa-resume-run-", { beforeAll, afterAll });
ledgers.prepare(
  "shop: dies after the handoff's model call",
  "shop: dies inside charge",
  "shop: dies inside lookup",
  "shop, charge approved: dies after the charge completed",
  "shop, charge approved: dies after the decision is recorded",
  "saving: dies inside save",
  "retrying: dies after its tool completed",
  "bad then charge: dies inside the charge",
  "bad then charge: dies in the model call after the charge",
  "bad beside charge: dies inside the charge",
  "bad and charge, then charge: dies inside the second charge",
);

// A new process resumes the run with a fresh fixture whose script goes on after `calls` turns.
async function resumeInNewProcess(
  store: EventStore,
  calls: number,
  options: { chargeNeedsApproval?: boolean } = {},
) {
  const second = fixture(options);
  second.model.calls = calls;
  const result = await resumeRun(second.main, runOptions(store, second.model));
  return { second, result };
}

describe("resumeRun after a crash", () => {
  test("replays recorded calls without calling the model or tools again", async () => {
    // Dies right after the handoff's model call completed (before the closer's call).
    const { store, first } = await ledgers.crashed("shop: dies after the handoff's model call");
    expect(first.modelInputs).toHaveLength(3);
    expect(first.effects).toEqual(["lookup book", "charge 7"]);

    // The script goes on at the closer's turn.
    const { second, result } = await resumeInNewProcess(store, 3);
    expect(result.finalOutput).toBe("sold for 7");
    // Only the closer's call was live; no tool ran again.
    expect(second.model.requests).toHaveLength(1);
    expect(second.effects).toEqual([]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    expect(inspection.runs[0]?.children.map((child) => child.actor?.id)).toEqual(["closer"]);
  });

  test("an unresolved non-idempotent tool call becomes an approval; approve runs it again", async () => {
    // Dies inside the charge, after it charged: its result never reached the ledger.
    const { store, first } = await ledgers.crashed("shop: dies inside charge");
    expect(first.effects).toEqual(["lookup book", "charge 7"]);
    const { second, result: paused } = await resumeInNewProcess(store, 0);
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(second.model.calls).toBe(0);
    expect(second.effects).toEqual([]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    second.model.calls = 2;
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual(["charge 7"]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    const charges = inspection.runs[0]?.steps.find((step) => step.attempts[0]?.name === "charge");
    expect(charges?.attempts.map((attempt) => attempt.status)).toEqual(["requested", "completed"]);
    expect(charges?.attempts[1]?.retryOf).toBe(charges?.attempts[0]?.attemptId);
  });

  test("a resume whose provider cannot give a model (no credentials) still reaches the call to decide, the run left open", async () => {
    // The SDK's OpenAIProvider throws "Missing credentials" from getModel in a process without
    // OPENAI_API_KEY. The run closed as failed before the ledger answered a call, with the charge
    // still unresolved, and every later resume said there was nothing to resume.
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const second = fixture();
    const noCredentials = {
      async getModel(): Promise<never> {
        throw new Error("Missing credentials. Please pass an apiKey");
      },
    };
    const paused = await resumeRun(second.main, {
      ...runOptions(store, second.model),
      modelProvider: noCredentials,
    });
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(second.effects).toEqual([]);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");

    // With the provider back, the decision goes through as after any other resume.
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    second.model.calls = 2;
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual(["charge 7"]);
  });

  test("approving a call with large arguments records its retry with the same arguments", async () => {
    // Arguments this large go to the blob store; the event keeps a reference.
    const text = LARGE_TEXT;
    // Dies inside the save, after it saved: its result never reached the ledger.
    const { store } = await ledgers.crashed("saving: dies inside save");

    const second = savingAgent();
    second.model.calls = 1;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done.status).toBe("completed");
    expect(second.saved).toEqual([text]);
    const events = await resolveEvents(store, await readWholeSession(store, "s"));
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested).toHaveLength(2);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
    for (const event of requested) expect(event.payload).toMatchObject({ args: { text } });
  });

  test("rejecting records attempt.abandoned and the model is told", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const { second, result: paused } = await resumeInNewProcess(store, 0);
    const { state, item } = firstInterruption(paused);
    state.reject(item);
    second.model.calls = 2;
    const done = await resumeRun(second.main, { ...runOptions(store, second.model), state });
    expect(done.finalOutput).toBe("not sold");
    expect(second.effects).toEqual([]);
    const events = await resolveEvents(store, await readWholeSession(store, "s"));
    const abandoned = events.filter((event) => event.type === "attempt.abandoned");
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]?.payload).toMatchObject({ toolCallId: "call_charge" });
    // The closer's request carries the rejection as the charge call's output.
    const lastRequest = events.filter((event) => event.type === "model.requested").at(-1);
    expect(JSON.stringify(lastRequest?.payload)).toMatch(/not approved|rejected/i);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a rejection with a message, then another crash: the re-executed run shows the model the same message", async () => {
    // The first process dies inside the charge. A second one asks about the charge, a person
    // rejects it with a message, and it dies right after the model answered with the rejection
    // in its input.
    const message = PHONE_REJECTION;
    const { store, second } = await ledgers.crashedTwice(
      "shop: dies inside charge",
      "shop resumed, charge rejected with a message: dies after the next model call",
    );
    expect(second.interruptions.map((item) => item.name)).toEqual(["charge"]);
    const sent = JSON.stringify(second.modelInputs.at(-1));
    expect(sent).toContain(message);

    // A third process re-executes from the input: the recorded call is answered from the ledger,
    // which needs the same request, so the same rejection text.
    const { third, result } = await (async () => {
      const third = fixture();
      third.model.calls = 3;
      return { third, result: await resumeRun(third.main, runOptions(store, third.model)) };
    })();
    expect(result).toMatchObject({ status: "completed", finalOutput: "not sold" });
    expect(third.effects).toEqual([]);
    expect(third.model.requests).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash between a person's rejection of a call in flight and its abandonment: the next process abandons it with the person's message, asking nobody", async () => {
    // The first process dies inside the charge. A second one asks about the charge, a person
    // rejects it with a message, and it dies right after the decision is recorded: the charge's
    // attempt, in flight since the first crash, is not abandoned yet.
    const { store, second } = await ledgers.crashedTwice(
      "shop: dies inside charge",
      "shop resumed, charge rejected with a message: dies after the decision is recorded",
    );
    expect(second.interruptions.map((item) => item.name)).toEqual(["charge"]);
    const [charge] = (await inspectSession(store, "s")).unresolved;
    expect(charge?.name).toBe("charge");
    const decisions = (await readWholeSession(store, "s")).filter(
      (event) => event.type === APPROVAL_EVENT_TYPE,
    );
    expect(decisions.map((event) => event.payload)).toEqual([
      {
        callId: expect.any(String),
        toolName: "charge",
        approved: false,
        attemptId: charge?.attemptId,
        message: PHONE_REJECTION,
      },
    ]);

    // A third process goes on with the recorded decision: nobody is asked, the charge does not
    // run, its attempt is abandoned with the person's message, and the model reads that message.
    const third = fixture();
    third.model.calls = 2;
    const result = await resumeRun(third.main, runOptions(store, third.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "not sold" });
    expect(third.effects).toEqual([]);
    expect(JSON.stringify(third.model.requests[0])).toContain(PHONE_REJECTION);
    const events = await readWholeSession(store, "s");
    const abandoned = events.filter((event) => event.type === "attempt.abandoned");
    expect(abandoned).toHaveLength(1);
    expect(abandoned[0]).toMatchObject({
      attemptId: charge?.attemptId,
      payload: { reason: PHONE_REJECTION },
    });
    expect(events.filter((event) => event.type === APPROVAL_EVENT_TYPE)).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("an unresolved idempotent tool call runs again by itself", async () => {
    // Dies inside the lookup, after it looked up.
    const { store } = await ledgers.crashed("shop: dies inside lookup");
    const { second, result } = await resumeInNewProcess(store, 1);
    expect(result.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual(["lookup book", "charge 7"]);
    // The first model call came from the ledger.
    expect(second.model.requests).toHaveLength(3);
  });

  test("a crash after an approval was decided resumes from the input and applies the decision", async () => {
    // Dies after the approved charge completed, before the next model call is recorded.
    const { store, first } = await ledgers.crashed(
      "shop, charge approved: dies after the charge completed",
    );
    expect(first.effects).toEqual(["lookup book", "charge 7"]);

    const { second, result } = await resumeInNewProcess(store, 2, { chargeNeedsApproval: true });
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual([]);
    expect(second.model.requests).toHaveLength(2);
  });

  test("a crash after a person approved, before the approved tool ran, does not ask again", async () => {
    // Dies right after the decision is recorded, before the charge is requested.
    const { store, first } = await ledgers.crashed(
      "shop, charge approved: dies after the decision is recorded",
    );
    expect(first.effects).toEqual(["lookup book"]);

    const { second, result } = await resumeInNewProcess(store, 2, { chargeNeedsApproval: true });
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold for 7" });
    expect(second.effects).toEqual(["charge 7"]);
    const events = await readWholeSession(store, "s");
    expect(events.filter((event) => event.type === APPROVAL_EVENT_TYPE)).toHaveLength(1);
  });

  test("a model call the runner retried (modelSettings.retry) is answered by its retry on resume", async () => {
    // The provider fails the first call with a 500, the runner's retry policy retries it; the
    // process dies right after its tool completed.
    const { store, first } = await ledgers.crashed("retrying: dies after its tool completed");
    expect(first.modelInputs).toHaveLength(2);

    const second = retryingAgent();
    second.model.calls = 2; // only the last turn is live
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "done" });
    expect(second.model.requests).toHaveLength(1);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.status).toBe("completed");
    expect(inspection.unresolved).toEqual([]);
  });
});

describe("resumeRun after the model sent tool arguments that are not JSON", () => {
  // The model's turns are BAD_THEN_CHARGE and the like (testing/charging-agents.ts); it answers
  // "sold" once a charge went through. Arguments that are not JSON get the SDK's answer asking
  // for valid JSON.
  test("a crash during a later call: the replayed call is answered as before, only the call in flight is asked about", async () => {
    const { store, first } = await ledgers.crashed("bad then charge: dies inside the charge");
    expect(first.effects).toEqual(["charge 7"]);

    const second = chargingAgent(BAD_THEN_CHARGE);
    second.model.calls = 2;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["call_charge"]);
    expect(second.model.requests).toHaveLength(0);
    expect(second.effects).toEqual([]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 7"]);
    expect(second.model.requests).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash during the model call after the charge: neither the charge nor a recorded model call is made again", async () => {
    const { store, first } = await ledgers.crashed(
      "bad then charge: dies in the model call after the charge",
    );
    expect(first.effects).toEqual(["charge 7"]);

    const second = chargingAgent(BAD_THEN_CHARGE);
    second.model.calls = 2;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual([]);
    // Only the call in flight is made again.
    expect(second.model.requests).toHaveLength(1);
  });

  test("a call that was not JSON beside the call in flight is not asked about", async () => {
    const { store } = await ledgers.crashed("bad beside charge: dies inside the charge");
    const second = chargingAgent(BAD_BESIDE_CHARGE);
    second.model.calls = 1;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["call_charge"]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 7"]);
    expect(JSON.stringify(second.model.requests[0]?.input)).toContain("valid JSON");
    // The person decided on the charge only: the ledger holds no decision on the bad call,
    // which the replay let through as the recorded run had.
    const decisions = (await readWholeSession(store, "s"))
      .filter((event) => event.type === APPROVAL_EVENT_TYPE)
      .map((event) => event.payload);
    expect(decisions).toEqual([expect.objectContaining({ callId: "call_charge", approved: true })]);
  });

  test("a turn with a completed call beside the one that was not JSON is replayed without asking", async () => {
    const { store, first } = await ledgers.crashed(
      "bad and charge, then charge: dies inside the second charge",
    );
    expect(first.effects).toEqual(["charge 7", "charge 3"]);

    const second = chargingAgent(BAD_AND_CHARGE_THEN_CHARGE);
    second.model.calls = 2;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["call_b"]);
    expect(second.effects).toEqual([]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 3"]);
    expect(second.model.requests).toHaveLength(1);
  });
});
