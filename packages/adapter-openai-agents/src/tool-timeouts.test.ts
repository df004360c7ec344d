import { inspectSession, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { slowChargeAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { outputWithoutLedger, runOptions } from "./testing/recorded-run.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-tool-timeouts-", { beforeAll, afterAll });
ledgers.prepare("slow charge: dies after its timeout was recorded");

/** Until the slow tool has run to its end (300 ms), and a little more. */
const toolEnded = () => new Promise((resolve) => setTimeout(resolve, 400));

// What the model was told in a run without the ledger.
const toldWithoutLedger = () => outputWithoutLedger(slowChargeAgent("error_as_result"));

describe("a tool call the runner's timeoutMs gives up on", () => {
  test("error_as_result: recorded as failed with the timeout; the tool's late end adds nothing", async () => {
    const expected = await toldWithoutLedger();
    expect(expected).toContain("timed out");
    const store = new MemoryEventStore();
    const recorded = slowChargeAgent("error_as_result");
    const result = await runWithLedger(recorded.agent, "go", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(recorded.model),
    });
    expect(result.finalOutput).toBe(expected);
    const events = await readWholeSession(store, "s");
    expect(events.find((event) => event.type === "tool.failed")?.payload).toMatchObject({
      toolCallId: "call_1",
      error: { name: "ToolTimeoutError", message: "Tool 'charge' timed out after 50ms." },
    });
    // Not a call in flight for good in a completed run: nothing is left to decide.
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);

    // The tool still charges (it did not heed its signal); its outcome stays the timeout.
    await toolEnded();
    expect(recorded.effects).toEqual(["charge 7"]);
    expect(await readWholeSession(store, "s")).toHaveLength(events.length);
  });

  test("raise_exception: the run fails with the timeout, and the call is recorded as failed with it", async () => {
    const store = new MemoryEventStore();
    const recorded = slowChargeAgent("raise_exception");
    const failure = await runWithLedger(recorded.agent, "go", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(recorded.model),
    }).catch((error: unknown) => error);
    expect((failure as Error).name).toBe("ToolTimeoutError");
    const types = (await readWholeSession(store, "s")).map((event) => event.type);
    expect(types.slice(-2)).toEqual(["tool.failed", "run.failed"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    await toolEnded();
  });

  test("after a crash, the resumed run times the call out again: the same answer, the tool not run", async () => {
    const expected = await toldWithoutLedger();
    const { store } = await ledgers.crashed("slow charge: dies after its timeout was recorded");
    const second = slowChargeAgent("error_as_result");
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model, "r"));
    expect(result).toMatchObject({ status: "completed", finalOutput: expected });
    await toolEnded();
    expect(second.effects).toEqual([]);
    const events = await readWholeSession(store, "s");
    expect(events.filter((event) => event.type === "tool.failed")).toHaveLength(1);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });
});
