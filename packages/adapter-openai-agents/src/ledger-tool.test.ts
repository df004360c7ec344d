import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { Agent, Runner, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { ledgerTool, ledgerToolEffect, resumeRun, runWithLedger } from "./index.js";
import { chargeTool, lookupThenBadChargeAgent, notJsonCharge } from "./testing/charging-agents.js";
import { reportingScenario } from "./testing/crash-scenarios.test.data.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { FailingStore } from "./testing/failing-store.js";
import { invalidArgumentAt } from "./testing/invalid-argument.test.data.js";
import { runOptions } from "./testing/recorded-run.js";
import { AWKWARD_OUTPUTS, type AwkwardOutput, reportingAgent } from "./testing/reporting-agent.js";
import {
  functionCall,
  message,
  ScriptedModel,
  scriptedProvider,
} from "./testing/scripted-model.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-ledger-tool-", { beforeAll, afterAll });
ledgers.prepare(
  ...(Object.keys(AWKWARD_OUTPUTS) as AwkwardOutput[]).map(reportingScenario),
  "lookup then bad charge: dies after the lookup completed",
);

// The process died right after the second model call completed (call_1 ran, call_2 not yet);
// its tool returned AWKWARD_OUTPUTS[output].
async function crashAfterSecondModelCall(output: AwkwardOutput) {
  return ledgers.crashed(reportingScenario(output));
}

// A new process resumes the run with a fresh agent whose script goes on after the two
// recorded model calls.
async function resumeInNewProcess(store: EventStore, output: AwkwardOutput) {
  const second = reportingAgent(AWKWARD_OUTPUTS[output]);
  second.model.calls = 2;
  const result = await resumeRun(second.agent, runOptions(store, second.model, "r"));
  return { second, result };
}

describe("ledgerTool outputs", () => {
  test("a tool that returns nothing is replayed as nothing: resume after a crash does not diverge", async () => {
    const { store, first } = await crashAfterSecondModelCall("nothing");
    expect(first.effects).toEqual(["sent"]);

    const { second, result } = await resumeInNewProcess(store, "nothing");
    expect(result.status).toBe("completed");
    // call_1 came from the ledger, call_2 ran live.
    expect(second.effects).toEqual(["sent"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("an output that is not plain JSON (undefined fields, Dates, -0) is recorded as the JSON the model saw", async () => {
    const output = AWKWARD_OUTPUTS["not plain JSON"];
    const { store, first } = await crashAfterSecondModelCall("not plain JSON");
    expect(first.effects).toEqual(["sent"]);
    const completed = (await readWholeSession(store, "s")).find(
      (event) => event.type === "tool.completed",
    );
    expect(completed?.payload).toMatchObject({
      result: { id: 7, at: "1970-01-01T00:00:00.000Z", delta: 0 },
    });

    const { second, result } = await resumeInNewProcess(store, "not plain JSON");
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual(["sent"]);
    // The one live model call sees call_1's replayed output as the same text as call_2's live one.
    expect(second.model.requests).toHaveLength(1);
    const seen = JSON.stringify(second.model.requests[0]?.input);
    expect(seen.split(JSON.stringify(JSON.stringify(output()))).length - 1).toBe(2);
  });

  test("a top-level Date, NaN or Infinity output is recorded as the text the model saw and replays as it", async () => {
    // The SDK shows the model JSON.stringify of an object (a Date: its quoted ISO text) and
    // String() of a number.
    const cases: [AwkwardOutput, string][] = [
      ["a Date", '"1970-01-01T00:00:00.000Z"'],
      ["NaN", "NaN"],
      ["Infinity", "Infinity"],
    ];
    for (const [output, seen] of cases) {
      const { store, first } = await crashAfterSecondModelCall(output);
      expect(first.effects).toEqual(["sent"]);
      const completed = (await readWholeSession(store, "s")).find(
        (event) => event.type === "tool.completed",
      );
      expect(completed?.payload).toMatchObject({ result: seen });

      const { second, result } = await resumeInNewProcess(store, output);
      expect(result.status).toBe("completed");
      expect(second.effects).toEqual(["sent"]);
      // call_1's replayed output and call_2's live one reach the model as the same text.
      const input = (second.model.requests[0]?.input ?? []) as { output?: { text?: string } }[];
      const outputs = input.map((item) => item.output?.text).filter((text) => text !== undefined);
      expect(outputs).toEqual([seen, seen]);
    }
  });

  test("text cut in the middle of an emoji (a lone surrogate) is recorded with U+FFFD and the run goes on", async () => {
    // A tool that truncates by UTF-16 units, as `slice` does: half of the emoji stays.
    const output = "half an emoji";
    const { store, first } = await crashAfterSecondModelCall(output);
    expect(first.effects).toEqual(["sent"]);
    const events = await readWholeSession(store, "s");
    expect(events.find((event) => event.type === "tool.completed")?.payload).toMatchObject({
      result: "price 7 \uFFFD",
    });
    expect(events.filter((event) => event.type === "model.completed")).toHaveLength(2);

    const { second, result } = await resumeInNewProcess(store, output);
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual(["sent"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("declaring a tool's effect later keeps the idempotence it was declared with", async () => {
    const lookup = ledgerTool(
      tool({
        name: "lookup",
        description: "look up a price",
        parameters: z.object({}),
        execute: async () => "7",
      }),
      { idempotent: true },
    );
    ledgerTool(lookup, { effect: "read" });
    expect(ledgerToolEffect(lookup)).toEqual({ kind: "read", idempotent: true });
    ledgerTool(lookup, { idempotent: false });
    expect(ledgerToolEffect(lookup)).toEqual({ kind: "read", idempotent: false });
  });

  test("ledgerTool refuses an effect or idempotence it does not know when it is called, with the option's path", async () => {
    const effects: string[] = [];
    const charge = chargeTool(effects);
    const bad: [Record<string, unknown>, string][] = [
      [{ effect: "bogus" }, "$.effect"],
      [{ idempotent: "yes" }, "$.idempotent"],
      [{ recorder: {} }, "$.recorder"],
      [{ idempotant: true }, "$.idempotant"],
    ];
    for (const [options, path] of bad) {
      let thrown: unknown;
      try {
        ledgerTool(charge, options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: "invalid-argument", path });
      expect(ledgerToolEffect(charge)).toBeUndefined();
    }
    expect(() => ledgerTool(charge, "idempotent" as never)).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$" }),
    );
    // Refining a tool wrapped before is checked the same way, and leaves its effect as it was.
    ledgerTool(charge, { effect: "write" });
    expect(() => ledgerTool(charge, { effect: "bogus" as never })).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.effect" }),
    );
    expect(ledgerToolEffect(charge)).toEqual({ kind: "write", idempotent: false });
    // So no run of it ever pays for a model call that its tool call would then fail on.
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      () => [functionCall("charge", { amount: 7 }, "call_1")],
      () => [message("done")],
    ]);
    const agent = new Agent({ name: "main", tools: [charge] });
    const result = await runWithLedger(agent, "go", runOptions(store, model));
    expect(result.status).toBe("completed");
    expect(effects).toEqual(["charge 7"]);
  });

  test("ledgerTool refuses what is not a function tool at $.tool, before anything is recorded", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "main" },
    });
    const wrap = ledgerTool as (...args: unknown[]) => unknown;
    const cases: [unknown, RegExp][] = [
      [{}, /ledgerTool wraps a function tool \(tool\(\{\.\.\.\}\)\), got object/],
      [null, /got null/],
      [{ type: "hosted_tool", name: "web_search" }, /got object/],
      [() => "7", /got function/],
    ];
    for (const [given, message] of cases)
      expect(() => wrap(given, { recorder }), String(message)).toThrow(
        invalidArgumentAt("$.tool", message),
      );
    expect(await readWholeSession(store, "s")).toEqual([]);
  });

  test("a call whose arguments are not JSON gets the SDK's own answer, not an approval interruption", async () => {
    const make = () => {
      const model = new ScriptedModel([
        () => [notJsonCharge("call_1")],
        (request) => [message(JSON.stringify(request.input))],
      ]);
      return { model, agent: new Agent({ name: "main", tools: [chargeTool([])] }) };
    };
    const plain = make();
    const expected = await new Runner({ modelProvider: scriptedProvider(plain.model) }).run(
      plain.agent,
      "go",
    );
    expect(expected.interruptions).toEqual([]);

    const recorded = make();
    const result = await runWithLedger(recorded.agent, "go", {
      store: new MemoryEventStore(),
      sessionId: "s",
      modelProvider: scriptedProvider(recorded.model),
    });
    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe(expected.finalOutput);
    expect(String(result.finalOutput)).toContain("valid JSON");
  });

  test("after a crash, a call whose arguments are not JSON still gets the SDK's own answer", async () => {
    const make = () => lookupThenBadChargeAgent();
    const plain = make();
    const expected = await new Runner({ modelProvider: scriptedProvider(plain.model) }).run(
      plain.agent,
      "go",
    );
    expect(String(expected.finalOutput)).toContain("valid JSON");

    // Dies after lookup completed; the resumed run has a recorded call and goes on live.
    const { store, first } = await ledgers.crashed(
      "lookup then bad charge: dies after the lookup completed",
    );
    expect(first.effects).toEqual(["lookup"]);
    const second = make();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model, "r"));
    expect(result.interruptions).toEqual([]);
    expect(result).toMatchObject({ status: "completed", finalOutput: expected.finalOutput });
    expect(second.effects).toEqual([]);
  });

  test("a call the SDK cancels because a parallel call failed is left in flight, not failed", async () => {
    const make = () => {
      const effects: string[] = [];
      // Runs until the SDK cancels it (it honours the call's abort signal).
      const wait = tool({
        name: "wait",
        description: "wait for a delivery",
        parameters: z.object({}),
        execute: async (_input, _context, details) => {
          effects.push("wait");
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, 1_000);
            details?.signal?.addEventListener("abort", () => {
              clearTimeout(timer);
              reject(details.signal?.reason);
            });
          });
          return "delivered";
        },
      });
      // Requested a little later than `wait`, so `wait` is running when this one fails.
      const late = tool({
        name: "late",
        description: "a late call",
        parameters: z.object({}),
        needsApproval: async () => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return false;
        },
        execute: async () => "late",
      });
      const model = new ScriptedModel([
        () => [functionCall("wait", {}, "call_wait"), functionCall("late", {}, "call_late")],
        () => [message("ok")],
      ]);
      return { effects, model, agent: new Agent({ name: "main", tools: [wait, late] }) };
    };
    const store = new FailingStore();
    let failures = 0;
    // The store is unreachable for late's request (and its two retries), then back.
    store.failWhen = (request) =>
      request.events.some(
        (event) =>
          event.type === "tool.requested" && (event.payload as { name: string }).name === "late",
      ) && ++failures <= 3;
    const first = make();
    const failure = await runWithLedger(
      first.agent,
      "go",
      runOptions(store, first.model, "r"),
    ).catch((error: unknown) => error);
    expect(String(failure)).toMatch(/store is down/);
    expect(first.effects).toEqual(["wait"]);
    const events = await readWholeSession(store, "s");
    expect(events.some((event) => event.type === "tool.failed")).toBe(false);
    expect((await inspectSession(store, "s")).unresolved.map((attempt) => attempt.name)).toEqual([
      "wait",
    ]);

    // It may or may not have done its work: the resumed run asks, as for any call in flight.
    const second = make();
    second.model.calls = 1;
    const paused = await resumeRun(second.agent, runOptions(store, second.model, "r"));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["wait"]);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");
  });
});
