import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import {
  inspectSession,
  type LedgerEvent,
  readWholeSession,
  resolveEvents,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { compiledBeside, killAtMarker, scratchDirectory } from "@agent-ledger/core/testing";
import { Agent, handoff, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun } from "./index.js";
import { instrumentAgent } from "./instrument-agent.js";
import { ledgerHandoff, ledgerHandoffEffect } from "./ledger-handoff.js";
import { recordsEveryCall } from "./records-every-call.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { DIED, parseReports } from "./testing/crashing-child.js";
import { type HandoffKind, handoffFixture } from "./testing/handoff-agents.js";
import type { HandoffCrash } from "./testing/handoff-crashes.js";
import { invalidArgumentAt } from "./testing/invalid-argument.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child (testing/handoff-crash.test.child.ts)
// recording to a SQLite file and is SIGKILLed right after the side effect its scenario names
// (testing/handoff-crashes.ts). The test then resumes the ledger as the next process would, with
// a fresh agent graph, and reads it with the built `agent-ledger` CLI.
const CHILD = compiledBeside("./testing/handoff-crash.test.child.js", import.meta.url);
const directory = scratchDirectory("oa-handoff-callback-", { beforeAll, afterAll });
const crashes = new Map<HandoffCrash, Promise<{ path: string; effects: string[] }>>();

function crashOnce(scenario: HandoffCrash) {
  let crash = crashes.get(scenario);
  if (!crash) {
    const path = join(directory, `${crashes.size}.db`);
    crash = (async () => {
      const { stdout } = await killAtMarker([CHILD, scenario, path], DIED);
      return { path, effects: parseReports(stdout).effects };
    })();
    crashes.set(scenario, crash);
  }
  return crash;
}

// The ledger the killed child left (a copy: several tests go on from one crash), opened.
async function crashed(scenario: HandoffCrash) {
  const crash = await crashOnce(scenario);
  const path = join(directory, `${scenario.replace(/\W+/g, "-")}-${Math.random()}.db`);
  // A killed WAL database is its file and its -wal file (the -shm is rebuilt on open).
  copyFileSync(crash.path, path);
  if (existsSync(`${crash.path}-wal`)) copyFileSync(`${crash.path}-wal`, `${path}-wal`);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { store, path, first: crash.effects };
}

// The next process: a fresh graph of the same kind.
function nextProcess(kind: HandoffKind, asTool = false) {
  return handoffFixture({ kind, asTool });
}

const isHandoffCall = (event: LedgerEvent) =>
  (event.payload as { name?: unknown } | undefined)?.name === "transfer_to_billing";

describe("a handoff with an onHandoff callback (handoff(billing, { onHandoff }))", () => {
  test("the crash is inside billing's charge: the resume does not run the callback again; the ticket is opened once", async () => {
    const { store, first } = await crashed("callback: dies inside charge");
    expect(first).toEqual(["ticket opened", "charge 7"]);
    // Recorded as a call of front, before billing's run: the SDK's callId, its tool's name.
    const events = await readWholeSession(store, "s");
    const requested = events.filter((e) => e.type === "tool.requested" && isHandoffCall(e));
    expect(requested).toHaveLength(1);
    expect(requested[0]?.runId).toBe("root");
    expect(requested[0]?.payload).toMatchObject({
      toolCallId: "call_handoff",
      name: "transfer_to_billing",
      args: {},
      effect: { kind: "unknown", idempotent: false },
    });
    expect(requested[0]?.metadata).toMatchObject({ handoffTo: "billing" });
    const completed = events.find(
      (e) => e.type === "tool.completed" && e.attemptId === requested[0]?.attemptId,
    );
    expect(completed?.payload).toMatchObject({ result: { assistant: "billing" } });

    const next = nextProcess("callback");
    const paused = await resumeRun(next.main, runOptions(store, next.model));
    // Only the charge in flight is asked about; the handoff came from the ledger.
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(next.effects).toEqual([]);
    const item = paused.interruptions[0];
    if (!item || !paused.state) throw new Error("expected an interruption");
    paused.state.reject(item, { message: "charged already" });
    const done = await resumeRun(next.main, {
      ...runOptions(store, next.model),
      state: paused.state,
    });
    expect(done.status).toBe("completed");
    expect(done.finalOutput).toBe("not paid");
    // Across both processes: one ticket, one charge.
    expect([...first, ...next.effects]).toEqual(["ticket opened", "charge 7"]);
    const after = await readWholeSession(store, "s");
    expect(after.filter((e) => e.type === "tool.requested" && isHandoffCall(e))).toHaveLength(1);
  });

  test("the crash is inside the callback itself: the resume refuses to run it again (unresolved-attempt) and runs nothing", async () => {
    const { store, path, first } = await crashed("callback: dies inside the callback");
    expect(first).toEqual(["ticket opened"]);
    const next = nextProcess("callback");
    const refusal = await resumeRun(next.main, runOptions(store, next.model)).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(refusal?.code).toBe("unresolved-attempt");
    expect(refusal?.message).toContain(
      "handoff transfer_to_billing (call_handoff) to billing was in flight when the process died",
    );
    // A resumeRun user has no recorder: the message names the command that decides the call.
    const [inFlight] = (await inspectSession(store, "s")).unresolved;
    expect(refusal?.message).toContain(
      `\`agent-ledger resolve --abandon "what you found" --store sqlite:${path} -- s ${inFlight?.attemptId}\` hands off without running the callback again`,
    );
    expect(refusal?.message).toContain("then call resumeRun again");
    expect(refusal?.message).not.toContain("recorder.abandon");
    expect(next.effects).toEqual([]);
    expect(next.model.calls).toBe(0);
    // The person on call sees the handoff by its name, in flight, with the command to decide it.
    const inspect = await agentLedger(path, "inspect", "s");
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toMatch(/tool transfer_to_billing \[call_handoff\] {2}!! UNRESOLVED/);
    expect(inspect.stdout).toContain("next: check the effect, then: agent-ledger resolve");
  });

  test("inside the callback, abandoned by a person (the ticket is open): the resume hands off without running the callback", async () => {
    const { store, path, first } = await crashed("callback: dies inside the callback");
    const [unresolved] = (await inspectSession(store, "s")).unresolved;
    expect(unresolved?.name).toBe("transfer_to_billing");
    const resolved = await agentLedger(
      path,
      "resolve",
      "--abandon",
      "ticket 12 is open",
      "--",
      "s",
      unresolved?.attemptId ?? "",
    );
    expect(resolved.code).toBe(0);
    const next = nextProcess("callback");
    const done = await resumeRun(next.main, runOptions(store, next.model));
    expect(done.status).toBe("completed");
    expect(done.finalOutput).toBe("paid");
    expect([...first, ...next.effects]).toEqual(["ticket opened", "charge 7"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    // Unlike a tool call's, an abandoned handoff's reason is no answer to the model: no model
    // request holds it (as `agent-ledger inspect` says under the command).
    const requests = (await resolveEvents(store, await readWholeSession(store, "s"))).filter(
      (event) => event.type === "model.requested",
    );
    expect(JSON.stringify(requests)).toContain("call_handoff");
    expect(JSON.stringify(requests)).not.toContain("ticket 12 is open");
  });

  test("inside the callback, approved by a person (no ticket was made): the resume runs the callback once more", async () => {
    const { store, path } = await crashed("callback: dies inside the callback");
    const [unresolved] = (await inspectSession(store, "s")).unresolved;
    const approved = await agentLedger(
      path,
      "resolve",
      "--approve",
      "no ticket in the tracker",
      "--",
      "s",
      unresolved?.attemptId ?? "",
    );
    expect(approved.code).toBe(0);
    const next = nextProcess("callback");
    const done = await resumeRun(next.main, runOptions(store, next.model));
    expect(done.status).toBe("completed");
    expect(next.effects).toEqual(["ticket opened", "charge 7"]);
    // The retry is recorded as a new attempt of the handoff call, completed.
    const retry = (await readWholeSession(store, "s")).find(
      (e) => e.type === "tool.requested" && e.retryOf === unresolved?.attemptId,
    );
    expect(retry?.payload).toMatchObject({ name: "transfer_to_billing" });
  });

  test("declared idempotent (ledgerHandoff), inside the callback: inspect says nothing to decide, and the resume runs it again by itself", async () => {
    const { store, path, first } = await crashed("idempotent callback: dies inside the callback");
    expect(first).toEqual(["ticket opened"]);
    const json = await agentLedger(path, "inspect", "s", "--json");
    const inspection = JSON.parse(json.stdout) as {
      unresolved: { name: string; effect: unknown }[];
      nextSteps: { action: string }[];
    };
    expect(inspection.unresolved.map((call) => call.name)).toEqual(["transfer_to_billing"]);
    expect(inspection.unresolved[0]?.effect).toEqual({ kind: "write", idempotent: true });
    expect(inspection.nextSteps).toEqual([{ action: "none" }]);

    const next = nextProcess("idempotent callback");
    const done = await resumeRun(next.main, runOptions(store, next.model));
    expect(done.status).toBe("completed");
    expect(next.effects).toEqual(["ticket opened", "charge 7"]);
    const events = await readWholeSession(store, "s");
    const retry = events.find((e) => e.type === "tool.requested" && e.retryOf !== undefined);
    expect(retry?.payload).toMatchObject({ name: "transfer_to_billing" });
    expect(
      events.some((e) => e.type === "tool.completed" && e.attemptId === retry?.attemptId),
    ).toBe(true);
  });
});

describe("a handoff without a callback behaves as before", () => {
  for (const kind of ["plain agent", "no callback"] as const)
    test(`${kind}: after a crash inside charge the resume asks only about the charge`, async () => {
      const { store, first } = await crashed(`${kind}: dies inside charge`);
      expect(first).toEqual(["charge 7"]);
      const events = await readWholeSession(store, "s");
      // A plain agent runs no code of its own: nothing to record. A handoff object may (the SDK
      // keeps its callback to itself): its invocation is recorded, completed.
      expect(events.filter((e) => e.type === "tool.requested" && isHandoffCall(e))).toHaveLength(
        kind === "plain agent" ? 0 : 1,
      );
      const next = nextProcess(kind);
      const paused = await resumeRun(next.main, runOptions(store, next.model));
      expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
      const item = paused.interruptions[0];
      if (!item || !paused.state) throw new Error("expected an interruption");
      paused.state.approve(item);
      const done = await resumeRun(next.main, {
        ...runOptions(store, next.model),
        state: paused.state,
      });
      expect(done.status).toBe("completed");
      expect(done.finalOutput).toBe("paid");
      expect(next.effects).toEqual(["charge 7"]);
      expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    });
});

describe("recordsEveryCall with handoffs", () => {
  test("an instrumented agent whose handoff has a callback: yes, the callback is recorded", () => {
    const { front } = handoffFixture({ kind: "callback" });
    expect(recordsEveryCall(instrumentAgent(front))).toBe(true);
    expect(ledgerHandoffEffect(front.handoffs[0] as object)).toEqual({
      kind: "unknown",
      idempotent: false,
    });
  });

  test("a handoff object given after instrumentAgent: no, its callback would run unseen; instrumented, yes", () => {
    const { front, billing } = handoffFixture({ kind: "plain agent" });
    instrumentAgent(front);
    expect(recordsEveryCall(front)).toBe(true);
    front.handoffs.push(handoff(billing, { onHandoff: () => undefined }));
    expect(recordsEveryCall(front)).toBe(false);
    instrumentAgent(front);
    expect(recordsEveryCall(front)).toBe(true);
  });

  test("an agent given a handoff without instrumentAgent: no; with ledgerHandoff alone, yes", () => {
    const billing = new Agent({ name: "billing" });
    const front = new Agent({ name: "front", handoffs: [handoff(billing)] });
    expect(recordsEveryCall(front)).toBe(false);
    ledgerHandoff(front.handoffs[0] as never, { effect: "none", idempotent: true });
    expect(recordsEveryCall(front)).toBe(true);
  });

  test("front as a tool, crash inside charge: its call is made again by itself and the ticket is not opened again", async () => {
    const { store, path, first } = await crashed("front as a tool, callback: dies inside charge");
    expect(first).toEqual(["ticket opened", "charge 7"]);
    // The child run of the front_tool call says it records every call its agent makes.
    const events = await readWholeSession(store, "s");
    const frontRun = events.find(
      (e) =>
        e.type === "run.started" && (e.payload as { asToolOf?: unknown }).asToolOf === "front_tool",
    );
    expect(frontRun?.payload).toMatchObject({ recordsEveryCall: true });
    const json = JSON.parse((await agentLedger(path, "inspect", "s", "--json")).stdout) as {
      unresolved: { name: string }[];
      nextSteps: { action: string }[];
    };
    expect(
      Object.fromEntries(json.unresolved.map((call, i) => [call.name, json.nextSteps[i]?.action])),
    ).toEqual({ front_tool: "decide-inner-first", charge: "resolve" });

    const next = nextProcess("callback", true);
    const paused = await resumeRun(next.main, runOptions(store, next.model));
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    const item = paused.interruptions[0];
    if (!item || !paused.state) throw new Error("expected an interruption");
    paused.state.reject(item, { message: "charged already" });
    const done = await resumeRun(next.main, {
      ...runOptions(store, next.model),
      state: paused.state,
    });
    expect(done.status).toBe("completed");
    expect([...first, ...next.effects]).toEqual(["ticket opened", "charge 7"]);
  });
});

describe("instrumentAgent and ledgerHandoff check their arguments when called", () => {
  test("not an Agent or a handoff, or bad options: invalid-argument at its path, nothing wrapped", () => {
    const billing = new Agent({ name: "billing" });
    const front = new Agent({ name: "front", handoffs: [handoff(billing)] });
    const given = front.handoffs[0] as object;
    const instrument = instrumentAgent as (...args: unknown[]) => unknown;
    const wrap = ledgerHandoff as (...args: unknown[]) => unknown;
    const cases: [() => unknown, string, RegExp][] = [
      [() => instrument(null), "$.agent", /instrumentAgent needs an Agent .*, got null/],
      [() => instrument({ name: "front", handoffs: [] }), "$.agent", /got object/],
      [() => instrument(front, 5), "$", /instrumentAgent's options are/],
      [() => wrap(billing), "$.handoff", /ledgerHandoff wraps a handoff .*, got object/],
      [() => wrap(undefined), "$.handoff", /got undefined/],
      [() => wrap(given, "idempotent"), "$", /ledgerHandoff's options are/],
      [() => wrap(given, { idempotent: "yes" }), "$.idempotent", /must be a boolean, got "yes"/],
      [() => wrap(given, { effect: "delete" }), "$.effect", /must be one of "none"/],
      [() => wrap(given, { idempotant: true }), "$.idempotant", /has no option "idempotant"/],
    ];
    for (const [call, path, message] of cases)
      expect(call, path).toThrow(invalidArgumentAt(path, message));
    expect(ledgerHandoffEffect(given)).toBeUndefined();
    expect(recordsEveryCall(front)).toBe(false);
  });
});
