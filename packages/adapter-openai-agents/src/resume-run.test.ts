import { inspectSession, type NewEvent, readWholeSession, resolveEvents } from "@agent-ledger/core";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "./index.js";
import { FailingStore } from "./testing/failing-store.js";
import { crashRetryingAgentAfterItsTool, fixture, retryingAgent } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// The store goes down right after the first event matching `when` and stays down: the
// in-process stand-in for a process that died at that point (the SIGKILL tests are in
// examples/openai-agents-resume).
async function crashAfter(
  when: (event: { type: string; payload?: unknown }) => boolean,
  options: { chargeNeedsApproval?: boolean } = {},
) {
  const store = new FailingStore();
  store.goDownAfter(when);
  const first = fixture(options);
  await runWithLedger(first.main, "sell a book", runOptions(store, first.model)).catch(
    () => undefined,
  );
  store.failWhen = undefined;
  return { store, first };
}

// A person approved the charge at its interruption, then the process died right after the
// first event matching `when` while the run went on.
async function crashAfterApproving(when: (event: { type: string }) => boolean) {
  const store = new FailingStore();
  const first = fixture({ chargeNeedsApproval: true });
  const paused = await runWithLedger(first.main, "sell a book", runOptions(store, first.model));
  const { state, item } = firstInterruption(paused);
  state.approve(item);
  store.goDownAfter(when);
  await resumeRun(first.main, { ...runOptions(store, first.model), state }).catch(() => undefined);
  store.failWhen = undefined;
  return { store, first };
}

// A new process resumes the run with a fresh fixture whose script goes on after `calls` turns.
async function resumeInNewProcess(
  store: FailingStore,
  calls: number,
  options: { chargeNeedsApproval?: boolean } = {},
) {
  const second = fixture(options);
  second.model.calls = calls;
  const result = await resumeRun(second.main, runOptions(store, second.model));
  return { second, result };
}

const chargeRequested = (event: { type: string; payload?: unknown }) =>
  event.type === "tool.requested" && (event.payload as { name: string }).name === "charge";

describe("resumeRun after a crash", () => {
  test("replays recorded calls without calling the model or tools again", async () => {
    // Dies right after the handoff's model call completed (before the closer's call).
    let completions = 0;
    const { store, first } = await crashAfter(
      (event) => event.type === "model.completed" && ++completions === 3,
    );
    expect(first.model.calls).toBe(3);
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
    const { store, first } = await crashAfter(chargeRequested);
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

  test("approving a call with large arguments records its retry with the same arguments", async () => {
    // Arguments this large go to the blob store; the event keeps a reference.
    const text = "ä€𝄞 ".repeat(10_000);
    const make = () => {
      const saved: string[] = [];
      const save = tool({
        name: "save",
        description: "save a document",
        parameters: z.object({ text: z.string() }),
        execute: async ({ text: given }) => {
          saved.push(given);
          return "saved";
        },
      });
      const model = new ScriptedModel([
        () => [functionCall("save", { text }, "call_save")],
        () => [message("ok")],
      ]);
      return { saved, model, agent: new Agent({ name: "main", tools: [save] }) };
    };
    const store = new FailingStore();
    store.goDownAfter((event) => event.type === "tool.requested");
    const first = make();
    await runWithLedger(first.agent, "go", runOptions(store, first.model)).catch(() => undefined);
    store.failWhen = undefined;

    const second = make();
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
    const { store } = await crashAfter(chargeRequested);
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
    const { store } = await crashAfter(chargeRequested);
    const { second, result: paused } = await resumeInNewProcess(store, 0);
    const { state, item } = firstInterruption(paused);
    const message = "already charged by phone";
    state.reject(item, { message });
    second.model.calls = 2;
    // The process dies again right after the model answered with the rejection in its input.
    store.goDownAfter((event) => event.type === "model.completed");
    await resumeRun(second.main, { ...runOptions(store, second.model), state }).catch(
      () => undefined,
    );
    store.failWhen = undefined;
    const sent = JSON.stringify(second.model.requests.at(-1)?.input);
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

  test("an unresolved idempotent tool call runs again by itself", async () => {
    const { store } = await crashAfter(
      (event) =>
        event.type === "tool.requested" && (event.payload as { name: string }).name === "lookup",
    );
    const { second, result } = await resumeInNewProcess(store, 1);
    expect(result.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual(["lookup book", "charge 7"]);
    // The first model call came from the ledger.
    expect(second.model.requests).toHaveLength(3);
  });

  test("a crash after an approval was decided resumes from the input and applies the decision", async () => {
    // Dies after the approved charge completed, before the next model call is recorded.
    const { store, first } = await crashAfterApproving((event) => event.type === "tool.completed");
    expect(first.effects).toEqual(["lookup book", "charge 7"]);

    const { second, result } = await resumeInNewProcess(store, 2, { chargeNeedsApproval: true });
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("sold for 7");
    expect(second.effects).toEqual([]);
    expect(second.model.requests).toHaveLength(2);
  });

  test("a crash after a person approved, before the approved tool ran, does not ask again", async () => {
    // Dies right after the decision is recorded, before the charge is requested.
    const { store, first } = await crashAfterApproving(
      (event) => event.type === APPROVAL_EVENT_TYPE,
    );
    expect(first.effects).toEqual(["lookup book"]);

    const { second, result } = await resumeInNewProcess(store, 2, { chargeNeedsApproval: true });
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold for 7" });
    expect(second.effects).toEqual(["charge 7"]);
    const events = await readWholeSession(store, "s");
    expect(events.filter((event) => event.type === APPROVAL_EVENT_TYPE)).toHaveLength(1);
  });

  test("a model call the runner retried (modelSettings.retry) is answered by its retry on resume", async () => {
    // The provider fails the first call with a 500, the runner's retry policy retries it.
    const { store, first } = await crashRetryingAgentAfterItsTool();
    expect(first.model.calls).toBe(2);

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

/** A tool that charges the card, noting each charge in `effects`. */
function chargeTool(effects: string[]) {
  return tool({
    name: "charge",
    description: "charge the card",
    parameters: z.object({ amount: z.number() }),
    execute: async ({ amount }) => {
      effects.push(`charge ${amount}`);
      return `charged ${amount}`;
    },
  });
}

describe("resumeRun with a provider that reuses tool call ids (call_0 on every response)", () => {
  // Two turns each charge under call_0, then the model answers.
  const make = () => {
    const effects: string[] = [];
    const charge = chargeTool(effects);
    const model = new ScriptedModel([
      () => [functionCall("charge", { amount: 7 }, "call_0")],
      () => [functionCall("charge", { amount: 3 }, "call_0")],
      () => [message("done")],
    ]);
    return { effects, model, agent: new Agent({ name: "main", tools: [charge] }) };
  };

  test("the second turn's call in flight is the one asked about; the first turn's completed call is not made again", async () => {
    const store = new FailingStore();
    let charges = 0;
    store.goDownAfter((event) => chargeRequested(event) && ++charges === 2);
    const first = make();
    await runWithLedger(first.agent, "go", runOptions(store, first.model)).catch(() => undefined);
    store.failWhen = undefined;
    expect(first.effects).toEqual(["charge 7", "charge 3"]);

    const second = make();
    second.model.calls = 2;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.status).toBe("interrupted");
    const { state, item } = firstInterruption(paused);
    expect(JSON.parse((item.rawItem as { arguments: string }).arguments)).toEqual({ amount: 3 });
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
    // The completed charge of 7 is not made again. (Nor is the approved one: @openai/agents
    // 0.14.3 skips an approved call whose id an earlier output already answers, as it does
    // without the ledger.)
    expect(second.effects).toEqual([]);
    const requested = (await readWholeSession(store, "s")).filter(
      (event) => event.type === "tool.requested",
    );
    expect(requested.map((event) => (event.payload as { args: unknown }).args)).toEqual([
      { amount: 7 },
      { amount: 3 },
      { amount: 3 },
    ]);
    expect(requested[2]?.retryOf).toBe(requested[1]?.attemptId);
  });
});

describe("resumeRun after the model sent tool arguments that are not JSON", () => {
  // `turns` are the model's answers; each call charges, and the model answers "sold" once a
  // charge went through. Arguments that are not JSON get the SDK's answer asking for valid JSON.
  const make = (turns: ReturnType<typeof functionCall>[][]) => {
    const effects: string[] = [];
    const charge = chargeTool(effects);
    const model = new ScriptedModel([
      ...turns.map((output) => () => output),
      (request) => [message(JSON.stringify(request.input).includes("charged") ? "sold" : "not")],
    ]);
    return { effects, model, agent: new Agent({ name: "main", tools: [charge] }) };
  };
  const notJson = (callId: string) => ({
    ...functionCall("charge", {}, callId),
    arguments: "{amount: 7",
  });
  const charge = (amount: number, callId: string) => functionCall("charge", { amount }, callId);
  const badThenCharge = [[notJson("call_bad")], [charge(7, "call_charge")]];

  async function crash(
    turns: ReturnType<typeof functionCall>[][],
    when: (event: NewEvent) => boolean,
  ) {
    const store = new FailingStore();
    store.goDownAfter(when);
    const first = make(turns);
    await runWithLedger(first.agent, "go", runOptions(store, first.model)).catch(() => undefined);
    store.failWhen = undefined;
    return { store, first };
  }

  test("a crash during a later call: the replayed call is answered as before, only the call in flight is asked about", async () => {
    const { store, first } = await crash(badThenCharge, chargeRequested);
    expect(first.effects).toEqual(["charge 7"]);

    const second = make(badThenCharge);
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
    let requests = 0;
    const { store, first } = await crash(
      badThenCharge,
      (event) => event.type === "model.requested" && ++requests === 3,
    );
    expect(first.effects).toEqual(["charge 7"]);

    const second = make(badThenCharge);
    second.model.calls = 2;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual([]);
    // Only the call in flight is made again.
    expect(second.model.requests).toHaveLength(1);
  });

  test("a call that was not JSON beside the call in flight is not asked about", async () => {
    const turns = [[notJson("call_bad"), charge(7, "call_charge")]];
    const { store } = await crash(turns, chargeRequested);
    const second = make(turns);
    second.model.calls = 1;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["call_charge"]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 7"]);
    expect(JSON.stringify(second.model.requests[0]?.input)).toContain("valid JSON");
  });

  test("a turn with a completed call beside the one that was not JSON is replayed without asking", async () => {
    const turns = [[notJson("call_bad"), charge(7, "call_a")], [charge(3, "call_b")]];
    let charges = 0;
    const { store, first } = await crash(
      turns,
      (event) => chargeRequested(event) && ++charges === 2,
    );
    expect(first.effects).toEqual(["charge 7", "charge 3"]);

    const second = make(turns);
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
