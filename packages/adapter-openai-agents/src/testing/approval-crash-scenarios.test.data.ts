// Crash scenarios of runs a person decided on (approved or rejected a call at its interruption,
// in this process or another) before the process died.
import { Runner, RunState } from "@openai/agents";
import { approvalCallId } from "../approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "../index.js";
import { deletingAgent, hostedMcpAgent } from "./approval-agents.js";
import { chargeCall, chargingAgent, THREE_CHARGES, TWO_CHARGES } from "./charging-agents.js";
import { type EventTest, isType, type Scenario } from "./crash-points.test.data.js";
import type { CrashingChild } from "./crashing-child.js";
import { fixture } from "./fixture.js";
import { deployingAgent, deployingAgentAsTool } from "./local-tool-agents.js";
import { firstInterruption, runOptions } from "./recorded-run.js";
import { scriptedProvider } from "./scripted-model.js";

/** What the person types when rejecting the charge in "shop resumed, charge rejected...". */
export const PHONE_REJECTION = "already charged by phone";

// A person approved the charge at its interruption, then the process died right after the first
// event matching `when` while the run went on.
const shopApprovedDyingAfter =
  (when: EventTest, effect?: string): Scenario =>
  async (child) => {
    const first = fixture({ chargeNeedsApproval: true, afterEffect: child.afterEffect(effect) });
    const paused = await runWithLedger(
      first.main,
      "sell a book",
      runOptions(child.store, first.model),
    );
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    child.decided(state);
    await resumeRun(first.main, { ...runOptions(child.dyingAfter(when), first.model), state });
  };

// A second process, on the ledger "shop: dies inside charge" left: it asks about the charge, a
// person rejects it with PHONE_REJECTION, and it dies right after the first event matching
// `when` while the run goes on.
const shopResumedRejectedDyingAfter =
  (when: EventTest): Scenario =>
  async (child) => {
    const second = fixture({ afterEffect: child.afterEffect() });
    child.watch(second.model);
    const paused = await resumeRun(second.main, runOptions(child.store, second.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.reject(item, { message: PHONE_REJECTION });
    second.model.calls = 2;
    await resumeRun(second.main, { ...runOptions(child.dyingAfter(when), second.model), state });
  };

// A plain SDK run pauses at the charge; a person approves it and the run goes on under the
// ledger from that RunState (runWithLedger's input), dying inside the charge (`dieAfter`) or in
// model call `dieInCall`.
const runStateInputDying =
  (options: { dieAfter?: string; dieInCall?: number }): Scenario =>
  async (child) => {
    const first = chargingAgent([[chargeCall(7, "call_1")]], child.afterEffect(options.dieAfter), {
      needsApproval: true,
    });
    const paused = await new Runner({ modelProvider: scriptedProvider(first.model) }).run(
      first.agent,
      "go",
    );
    const [item] = paused.interruptions;
    if (!item) throw new Error("expected the charge to ask for approval");
    paused.state.approve(item);
    if (options.dieInCall !== undefined) child.watch(first.model, { dieInCall: options.dieInCall });
    await runWithLedger(first.agent, paused.state, runOptions(child.store, first.model));
  };

// A person approved the delete of /a and rejected the one of /b at the run's interruptions, then
// the process died inside the delete of `effect` or right after the first event matching `after`.
const deletingDecidedDying =
  (options: { effect?: string; after?: EventTest }): Scenario =>
  async (child) => {
    const first = deletingAgent({ afterEffect: child.afterEffect(options.effect) });
    const paused = await runWithLedger(
      first.agent,
      "clean up",
      runOptions(child.store, first.model),
    );
    child.asked(paused.interruptions);
    const state = paused.state;
    if (!state) throw new Error("expected a state");
    for (const item of paused.interruptions)
      if (approvalCallId(item) === "call_a") state.approve(item);
      else state.reject(item);
    const store = options.after ? child.dyingAfter(options.after) : child.store;
    await resumeRun(first.agent, { ...runOptions(store, first.model), state });
  };

export const APPROVAL_CRASH_SCENARIOS = {
  "shop, charge approved: dies after the charge completed": shopApprovedDyingAfter(
    isType("tool.completed"),
  ),
  "shop, charge approved: dies after the decision is recorded": shopApprovedDyingAfter(
    isType(APPROVAL_EVENT_TYPE),
  ),
  "shop, charge approved: dies inside charge": shopApprovedDyingAfter(() => false, "charge 7"),
  "shop resumed, charge rejected with a message: dies after the next model call":
    shopResumedRejectedDyingAfter(isType("model.completed")),
  // The same rejection; the process dies right after the decision is recorded, before the
  // charge's attempt (in flight since the first crash) is abandoned.
  "shop resumed, charge rejected with a message: dies after the decision is recorded":
    shopResumedRejectedDyingAfter(isType(APPROVAL_EVENT_TYPE)),
  // A person approved the delete of /a and rejected the one of /b; dies while /a is deleted.
  "deleting, /a approved and /b rejected: dies inside the delete of /a": deletingDecidedDying({
    effect: "/a",
  }),
  // The same decisions; the process dies right after the first append of a decision.
  "deleting, /a approved and /b rejected: dies after the first decision is recorded":
    deletingDecidedDying({ after: isType(APPROVAL_EVENT_TYPE) }),
  "hosted MCP, approved: dies after the decision is recorded": async (child) => {
    const first = hostedMcpAgent();
    const paused = await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const store = child.dyingAfter(isType(APPROVAL_EVENT_TYPE));
    await resumeRun(first.agent, { ...runOptions(store, first.model), state });
  },
  // A person approves the charge c0 for good (alwaysApprove), so c1 runs without asking; the
  // process dies in the model call after both charges (the one that asks for c2).
  "three charges, the first approved for good: dies in the third model call": async (child) => {
    const first = chargingAgent(THREE_CHARGES, child.afterEffect(), { needsApproval: true });
    child.watch(first.model, { dieInCall: 2 });
    const paused = await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.approve(item, { alwaysApprove: true });
    await resumeRun(first.agent, { ...runOptions(child.store, first.model), state });
  },
  // The same, but the process dies inside c1, after it charged.
  "two charges, the first approved for good: dies inside the second charge": async (child) => {
    const first = chargingAgent(TWO_CHARGES, child.afterEffect("charge 7"), {
      needsApproval: true,
    });
    const paused = await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.approve(item, { alwaysApprove: true });
    await resumeRun(first.agent, { ...runOptions(child.store, first.model), state });
  },
  "run state input, charge approved: dies in the model call after the charge": runStateInputDying({
    dieInCall: 1,
  }),
  "run state input, charge approved: dies inside the charge": runStateInputDying({
    dieAfter: "charge 7",
  }),
  // The deploy asks a person; the approval is made on a copy of the state (as another process
  // would), and the run goes on from it, dying in the model call after the deploy.
  "shell, deploy approved: dies in the model call after the deploy": async (child) => {
    const first = deployingAgent(child.afterEffect(), { needsApproval: true });
    child.watch(first.model, { dieInCall: 1 });
    const paused = await runWithLedger(first.agent, "deploy", runOptions(child.store, first.model));
    child.asked(paused.interruptions);
    const state = await RunState.fromString(
      first.agent,
      firstInterruption(paused).state.toString(),
    );
    const [item] = state.getInterruptions();
    if (!item) throw new Error("expected the deploy to ask for approval");
    state.approve(item);
    await resumeRun(first.agent, { ...runOptions(child.store, first.model), state });
  },
  // The same inside an agent used as a tool: the pause is ops_tool's, the approval is made on a
  // copy of the state, and the run goes on from it, dying inside the deploy (`dieAfter`) or in
  // ops's model call after it.
  "shell in an agent tool, deploy approved: dies inside the deploy": async (child) => {
    await deployApprovedInAgentTool(child, "ran ./deploy.sh prod");
  },
  "shell in an agent tool, deploy approved: dies in ops's model call after the deploy": async (
    child,
  ) => {
    await deployApprovedInAgentTool(child);
  },
} satisfies Record<string, Scenario>;

/** Runs ops as a tool until its deploy asks, approves it on a copy of the state, goes on. */
async function deployApprovedInAgentTool(child: CrashingChild, dieAfter?: string) {
  const first = deployingAgentAsTool(child.afterEffect(dieAfter));
  if (dieAfter === undefined) child.watch(first.opsModel, { dieInCall: 1 });
  const paused = await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  child.asked(paused.interruptions);
  const state = await RunState.fromString(first.main, firstInterruption(paused).state.toString());
  const [item] = state.getInterruptions();
  if (!item) throw new Error("expected the deploy to ask for approval");
  state.approve(item);
  await resumeRun(first.main, { ...runOptions(child.store, first.model), state });
}
