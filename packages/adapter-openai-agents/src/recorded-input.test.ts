import { inspectSession, readWholeSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Agent, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun } from "./index.js";
import { pastedCommand } from "./testing/agent-ledger-cli.js";
import { chargeCall, chargingAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const DIES_AFTER_CHARGE =
  "run state input, charge approved: dies in the model call after the charge";

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-recorded-input-", { beforeAll, afterAll });
const DIES_INSIDE_CHARGE = "run state input, charge approved: dies inside the charge";
ledgers.prepare(DIES_AFTER_CHARGE, DIES_INSIDE_CHARGE);
// Where the person on call runs the commands a message prints: not beside the ledger.
const elsewhere = scratchDirectory("oa-recorded-input-shell-", { beforeAll, afterAll });

describe("a run that went on from a RunState (runWithLedger's input)", () => {
  test("resumed after a crash, it goes on from that state again: the approved charge is answered from the ledger, not made twice", async () => {
    const { store, first } = await ledgers.crashed(DIES_AFTER_CHARGE);
    expect(first.effects).toEqual(["charge 7"]);

    const second = chargingAgent([[chargeCall(7, "call_1")]], undefined, { needsApproval: true });
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model));

    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("sold");
    expect(second.effects).toEqual([]);
    const view = await inspectSession(store, "s");
    expect(view.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(view.unresolved).toEqual([]);
  });

  test("a charge in flight at the crash that the state approved is refused (the SDK does not ask again), and decided with agent-ledger resolve", async () => {
    const { store, path, first } = await ledgers.crashed(DIES_INSIDE_CHARGE);
    expect(first.effects).toEqual(["charge 7"]);

    const second = chargingAgent([[chargeCall(7, "call_1")]], undefined, { needsApproval: true });
    second.model.calls = 1;
    const refusal = await resumeRun(second.agent, runOptions(store, second.model)).then(
      () => undefined,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(refusal?.code).toBe("unresolved-attempt");
    expect(second.effects).toEqual([]);
    const [inFlight] = (await inspectSession(store, "s")).unresolved;
    expect(inFlight?.toolCallId).toBe("call_1");
    // A resumeRun user has no recorder: the message names the command that decides the call.
    expect(refusal?.message).toContain(
      `tool call charge (call_1) was in flight when the process died and is not declared idempotent`,
    );
    expect(refusal?.message).toContain(
      `decide it from a shell: \`agent-ledger resolve --abandon "what you found" --store sqlite:${path} -- s ${inFlight?.attemptId}\``,
    );
    expect(refusal?.message).not.toContain("recorder.abandon");

    // The command as printed, pasted into a shell elsewhere (no $AGENT_LEDGER_STORE): it names
    // the store the run recorded to, so it finds the session and decides the call.
    const printed = /`(agent-ledger resolve [^`]*)`/.exec(refusal?.message ?? "")?.[1] ?? "";
    const resolved = await pastedCommand(printed, elsewhere);
    expect(resolved).toMatchObject({ code: 0, stderr: "" });
    const inspectCommand = /`(agent-ledger inspect [^`]*)`/.exec(refusal?.message ?? "")?.[1];
    const inspected = await pastedCommand(inspectCommand ?? "", elsewhere);
    expect(inspected.code).toBe(0);
    expect(inspected.stdout).toMatch(/tool charge \[call_1\] {2}abandoned .* "what you found"/);
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual([]);
  });

  test("a state that no longer loads (the agent lost its tool) is refused, and the run is left open, not failed", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CHARGE);
    const before = await readWholeSession(store, "s");
    const second = chargingAgent([[chargeCall(7, "call_1")]]);
    const toolless = new Agent({ name: "main" });

    await expect(resumeRun(toolless, runOptions(store, second.model))).rejects.toMatchObject({
      code: "invalid-argument",
      path: "$.agent",
      message: expect.stringMatching(/the RunState the run went on from does not load with it/),
    });
    expect(await readWholeSession(store, "s")).toEqual(before);
    expect((await inspectSession(store, "s")).runs.map((run) => run.status)).toEqual(["running"]);
  });
});
