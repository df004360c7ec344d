import { inspectSession, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { resumeRun, runWithLedger } from "./index.js";
import { declinedChargeAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { outputWithoutLedger, runOptions } from "./testing/recorded-run.js";
import {
  functionCall,
  message,
  ScriptedModel,
  scriptedProvider,
} from "./testing/scripted-model.js";
import { MODEL_WAS_TOLD } from "./tool-error-report.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-tool-errors-", { beforeAll, afterAll });
ledgers.prepare("declined charge: dies after the failure was recorded");

// What the model was told in a run without the ledger.
const toldWithoutLedger = () => outputWithoutLedger(declinedChargeAgent());

describe("a tool that throws (the SDK tells the model and the run goes on)", () => {
  test("is recorded as tool.failed with its error, and with what the model was told", async () => {
    const expected = await toldWithoutLedger();
    expect(expected).toContain("card declined");

    const store = new MemoryEventStore();
    const recorded = declinedChargeAgent();
    const result = await runWithLedger(recorded.agent, "go", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(recorded.model),
    });
    // The run itself goes as it goes without the ledger.
    expect(result.finalOutput).toBe(expected);
    expect(recorded.effects).toEqual(["charge 7"]);

    const events = await readWholeSession(store, "s");
    expect(events.some((event) => event.type === "tool.completed")).toBe(false);
    const failed = events.find((event) => event.type === "tool.failed");
    expect(failed?.payload).toMatchObject({
      error: { name: "TypeError", message: "card declined" },
    });
    // The message the model got, as the model got it (its input item's output text).
    const told = failed?.metadata?.[MODEL_WAS_TOLD];
    expect(typeof told).toBe("string");
    expect(expected).toContain(JSON.stringify(told).slice(1, -1));

    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts) ?? [];
    expect(attempts.map((attempt) => [attempt.kind, attempt.status])).toEqual([
      ["model", "completed"],
      ["tool", "failed"],
      ["model", "completed"],
    ]);
  });

  test("after a crash, the resumed run gives the model the same answer and does not run it again", async () => {
    const expected = await toldWithoutLedger();
    const { store, first } = await ledgers.crashed(
      "declined charge: dies after the failure was recorded",
    );
    expect(first.effects).toEqual(["charge 7"]);

    const second = declinedChargeAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model, "r"));
    expect(result).toMatchObject({ status: "completed", finalOutput: expected });
    expect(second.effects).toEqual([]);
    const events = await readWholeSession(store, "s");
    expect(events.filter((event) => event.type === "tool.failed")).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a plain Error is recorded with its own message, not with its name put before it", async () => {
    // The SDK reports the error's text ("Error: out of stock"); an Error's name is "Error".
    const outOfStock = tool({
      name: "reserve",
      description: "reserves the item",
      parameters: z.object({}),
      execute: async () => {
        throw new Error("out of stock");
      },
    });
    const model = new ScriptedModel([
      () => [functionCall("reserve", {}, "call_reserve")],
      () => [message("done")],
    ]);
    const store = new MemoryEventStore();
    const agent = new Agent({ name: "main", tools: [outOfStock] });
    const result = await runWithLedger(agent, "go", runOptions(store, model));
    expect(result.finalOutput).toBe("done");
    const failed = (await readWholeSession(store, "s")).find(
      (event) => event.type === "tool.failed",
    );
    expect(failed?.payload).toHaveProperty("error", { name: "Error", message: "out of stock" });
  });

  test("parallel calls each get their own outcome: one failed, one completed", async () => {
    const make = () => {
      const effects: string[] = [];
      const flaky = tool({
        name: "flaky",
        description: "fails when asked to",
        parameters: z.object({ fail: z.boolean() }),
        execute: async ({ fail }) => {
          // The failing call ends while the other is still running, and the reverse.
          await new Promise((resolve) => setTimeout(resolve, fail ? 5 : 20));
          effects.push(fail ? "failed" : "ran");
          if (fail) throw new Error("asked to fail");
          return "fine";
        },
      });
      const model = new ScriptedModel([
        () => [
          functionCall("flaky", { fail: true }, "call_bad"),
          functionCall("flaky", { fail: false }, "call_good"),
        ],
        () => [message("done")],
      ]);
      return { effects, model, agent: new Agent({ name: "main", tools: [flaky] }) };
    };
    const store = new MemoryEventStore();
    const recorded = make();
    const result = await runWithLedger(recorded.agent, "go", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(recorded.model),
    });
    expect(result.finalOutput).toBe("done");
    const events = await readWholeSession(store, "s");
    const outcomes = new Map(
      events
        .filter((event) => event.type === "tool.completed" || event.type === "tool.failed")
        .map((event) => [(event.payload as { toolCallId: string }).toolCallId, event.type]),
    );
    expect(Object.fromEntries(outcomes)).toEqual({
      call_bad: "tool.failed",
      call_good: "tool.completed",
    });
  });
});
