// What each crash child runs (crash-scenarios.test.child.ts) until it dies at its crash point:
// the first process of a crash test, whose ledger the test then resumes as the next process.
import type { NewEvent } from "@agent-ledger/core";
import { Runner, RunState } from "@openai/agents";
import { approvalCallId } from "../approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "../index.js";
import { deletingAgent, hostedMcpAgent } from "./approval-agents.js";
import { cartAgent, cartContext } from "./cart-agent.js";
import {
  BAD_AND_CHARGE_THEN_CHARGE,
  BAD_BESIDE_CHARGE,
  BAD_THEN_CHARGE,
  CALL_0_EVERY_TURN,
  chargeCall,
  chargingAgent,
  declinedChargeAgent,
  lookupThenBadChargeAgent,
  slowChargeAgent,
  THREE_CHARGES,
  TWO_CALLS_EVERY_TURN,
  TWO_CHARGES,
} from "./charging-agents.js";
import { registryAgent } from "./client-tool-search-agent.js";
import { draftingAgents, ticketHandoffAgents } from "./context-agents.js";
import type { CrashingChild } from "./crashing-child.js";
import { fixture, rateLimitedAgent, retryingAgent } from "./fixture.js";
import { guardedChargingAgent, toolGuardedChargingAgent } from "./guarded-agents.js";
import { mcpRegistryAgent, namespacedRegistryAgent } from "./loading-registry-agents.js";
import { cleaningAgent, deployingAgent, deployingAgentAsTool } from "./local-tool-agents.js";
import { mcpShop } from "./mcp-agents.js";
import { nestedAgentToolsFixture } from "./nested-agent-tools.js";
import { decliningAgent, hideReceipt, RECEIPT_PATH, receiptAgent } from "./receipt-agent.js";
import { appRecorder, firstInterruption, runOptions, streamedRun } from "./recorded-run.js";
import { AWKWARD_OUTPUTS, type AwkwardOutput, reportingAgent } from "./reporting-agent.js";
import { researchFixture } from "./research-agents.js";
import { LARGE_TEXT, savingAgent } from "./saving-agent.js";
import { scriptedProvider } from "./scripted-model.js";
import { agentToolFixture } from "./writer-agent.js";

type Scenario = (child: CrashingChild) => Promise<unknown>;
type EventTest = (event: NewEvent) => boolean;

/** What the person types when rejecting the charge in "shop resumed, charge rejected...". */
export const PHONE_REJECTION = "already charged by phone";

const isType =
  (type: string): EventTest =>
  (event) =>
    event.type === type;

// An event's payload fields (a payload that is not an object has none).
function payloadOf(event: NewEvent): Record<string, unknown> {
  const payload = event.payload;
  return typeof payload === "object" && payload !== null
    ? (payload as Record<string, unknown>)
    : {};
}

/** True on the `count`th event that matches `when`. */
function nth(count: number, when: EventTest): EventTest {
  let seen = 0;
  return (event) => when(event) && ++seen === count;
}

// The shop fixture's run, dying right after its tool performed `effect`.
const shopDyingInside =
  (effect: string): Scenario =>
  async (child) => {
    const first = fixture({ afterEffect: child.afterEffect(effect) });
    child.watch(first.model);
    await runWithLedger(first.main, "sell a book", runOptions(child.store, first.model));
  };

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

// The charging agent's run with `turns`, dying right after the charge `effect`.
const chargingDyingInside =
  (turns: typeof BAD_THEN_CHARGE, effect: string): Scenario =>
  async (child) => {
    const first = chargingAgent(turns, child.afterEffect(effect));
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  };

// The reporting agent's run (its tool returns `output`), dying right after the second model
// call completed: call_1 ran, call_2 not yet.
const reportingDyingAfterSecondModelCall =
  (output: AwkwardOutput): Scenario =>
  async (child) => {
    const first = reportingAgent(AWKWARD_OUTPUTS[output], child.afterEffect());
    const store = child.dyingAfter(nth(2, isType("model.completed")));
    await runWithLedger(first.agent, "go", runOptions(store, first.model, "r"));
  };

const reportingScenarios = Object.fromEntries(
  (Object.keys(AWKWARD_OUTPUTS) as AwkwardOutput[]).map((output) => [
    reportingScenario(output),
    reportingDyingAfterSecondModelCall(output),
  ]),
) as Record<ReturnType<typeof reportingScenario>, Scenario>;

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

// The guarded charging agent's run, its input guardrail given to the agent or to the runner
// (`on`), dying inside the charge. The guardrail's lookup is slow here: the agent's model call
// starts before the guardrail's.
const guardedDyingInsideCharge =
  (on: "agent" | "runner"): Scenario =>
  async (child) => {
    const first = guardedChargingAgent({
      lookupMs: 50,
      afterEffect: child.afterEffect("charge 7"),
      on,
    });
    const { runner } = first;
    await runWithLedger(first.agent, "go", { ...runOptions(child.store, first.model), runner });
  };

// The same, dying inside the guardrail's model call (the agent's has completed by then).
const guardedDyingInGuardrailCall =
  (on: "agent" | "runner"): Scenario =>
  async (child) => {
    const first = guardedChargingAgent({ lookupMs: 0, afterEffect: child.afterEffect(), on });
    child.watch(first.guardModel, { dieInCall: 0 });
    const { runner } = first;
    await runWithLedger(first.agent, "go", { ...runOptions(child.store, first.model), runner });
  };

// The rate-limited agent's run, dying right after its `count`th model call failure committed
// (before the runner retries it, or the run is closed as failed). `resume`: a second process,
// resuming the run a killed one left; it counts only the failures it commits (the recorded ones
// are answered from the ledger).
const rateLimitedDyingAfter =
  (
    count: number,
    options: Parameters<typeof rateLimitedAgent>[0],
    how: "run" | "resume" = "run",
  ): Scenario =>
  async (child) => {
    const first = rateLimitedAgent(options);
    const store = child.dyingAfter(nth(count, isType("model.failed")));
    if (how === "resume") await resumeRun(first.agent, runOptions(store, first.model));
    else await runWithLedger(first.agent, "go", runOptions(store, first.model));
  };

// The same run streamed, on a recorder the app made (`ledgerModelProvider` with `{ recorder }`).
const rateLimitedStreamedDyingAfter =
  (count: number, options: Parameters<typeof rateLimitedAgent>[0]): Scenario =>
  async (child) => {
    const first = rateLimitedAgent(options);
    const store = child.dyingAfter(nth(count, isType("model.failed")));
    await streamedRun(first, await appRecorder(store, "start"));
  };

/** The scenario where the reporting agent's tool returns `output` (see AWKWARD_OUTPUTS). */
export function reportingScenario(output: AwkwardOutput) {
  return `reporting ${output}: dies after the second model call` as const;
}

export const CRASH_SCENARIOS = {
  "shop: dies after the handoff's model call": async (child) => {
    const first = fixture({ afterEffect: child.afterEffect() });
    child.watch(first.model);
    const store = child.dyingAfter(nth(3, isType("model.completed")));
    await runWithLedger(first.main, "sell a book", runOptions(store, first.model));
  },
  "shop: dies inside charge": shopDyingInside("charge 7"),
  "shop: dies inside lookup": shopDyingInside("lookup book"),
  "guarded charge: dies inside charge": guardedDyingInsideCharge("agent"),
  "runner-guarded charge: dies inside charge": guardedDyingInsideCharge("runner"),
  // The guardrail of the charge of 7 is slow here: the charge of 8 is checked first.
  "tool-guarded charges: dies inside the charge of 7": async (child) => {
    const first = toolGuardedChargingAgent({
      slowAmount: 7,
      afterEffect: child.afterEffect("charge 7"),
    });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  "guarded charge: dies inside the guardrail's model call": guardedDyingInGuardrailCall("agent"),
  "runner-guarded charge: dies inside the guardrail's model call":
    guardedDyingInGuardrailCall("runner"),
  "shop, charge approved: dies after the charge completed": shopApprovedDyingAfter(
    isType("tool.completed"),
  ),
  "shop, charge approved: dies after the decision is recorded": shopApprovedDyingAfter(
    isType(APPROVAL_EVENT_TYPE),
  ),
  "shop, charge approved: dies inside charge": shopApprovedDyingAfter(() => false, "charge 7"),
  // A second process, on the ledger "shop: dies inside charge" left: it asks about the charge,
  // a person rejects it with PHONE_REJECTION, and it dies right after the model answered that.
  "shop resumed, charge rejected with a message: dies after the next model call": async (child) => {
    const second = fixture({ afterEffect: child.afterEffect() });
    child.watch(second.model);
    const paused = await resumeRun(second.main, runOptions(child.store, second.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.reject(item, { message: PHONE_REJECTION });
    second.model.calls = 2;
    const store = child.dyingAfter(isType("model.completed"));
    await resumeRun(second.main, { ...runOptions(store, second.model), state });
  },
  // The app's client tool search (its registry) is running, its request recorded.
  "registry: dies inside the tool search": async (child) => {
    const first = registryAgent();
    first.beforeSearch = async (args) => {
      await child.afterEffect()(`search ${String(args.toolCall.id)}`);
      await child.dieHere();
    };
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  "registry: dies after the tool search completed": async (child) => {
    const first = registryAgent();
    first.beforeSearch = async (args) => {
      await child.afterEffect()(`search ${String(args.toolCall.id)}`);
    };
    const store = child.dyingAfter(isType("tool.completed"));
    await runWithLedger(first.agent, "go", runOptions(store, first.model));
  },
  // The search loaded a namespaced tool (which read what the search wrote into the context) or a
  // hosted MCP server, and the model called it.
  "namespaced registry: dies after weather.forecast completed": async (child) => {
    const first = namespacedRegistryAgent();
    const store = child.dyingAfter(
      (event) => event.type === "tool.completed" && payloadOf(event).toolCallId === "call_forecast",
    );
    await runWithLedger(first.agent, "go", { ...runOptions(store, first.model), context: {} });
  },
  "MCP registry: dies in the model call after the provider's MCP call": async (child) => {
    const first = mcpRegistryAgent();
    child.watch(first.model, { dieInCall: 2 });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  "saving: dies inside save": async (child) => {
    const first = savingAgent(child.afterEffect(`save ${LARGE_TEXT.length} characters`));
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  // The provider fails the first call with a 500, the runner retries it; dies after the lookup.
  "retrying: dies after its tool completed": async (child) => {
    const first = retryingAgent();
    child.watch(first.model);
    const store = child.dyingAfter(isType("tool.completed"));
    await runWithLedger(first.agent, "price?", runOptions(store, first.model));
  },
  "rate limited: dies after the failure was recorded": rateLimitedDyingAfter(1, { failures: 1 }),
  "rate limited, a retry left: dies after the failure was recorded": rateLimitedDyingAfter(1, {
    failures: 1,
    retries: 1,
  }),
  "rate limited, no retry left: dies after the last failure was recorded": rateLimitedDyingAfter(
    2,
    { failures: 2, retries: 1 },
  ),
  // Every attempt the runner may make fails (3 retries), and the process dies waiting to retry
  // the second failure; then a resume dies waiting to retry the failure of its retry.
  "rate limited, retries left: dies after the second failure was recorded": rateLimitedDyingAfter(
    2,
    { failures: 4, retries: 3 },
  ),
  "rate limited, retries left, resumed: dies after its retry's failure was recorded":
    rateLimitedDyingAfter(1, { failures: 4, retries: 3 }, "resume"),
  // Streamed, on a recorder the app made: how an app streams a run it resumes (resumeRun does not).
  "rate limited, a retry left, streamed: dies after the failure was recorded":
    rateLimitedStreamedDyingAfter(1, { failures: 1, retries: 1 }),
  "rate limited, retries left, streamed: dies after the second failure was recorded":
    rateLimitedStreamedDyingAfter(2, { failures: 4, retries: 3 }),
  "call_0 every turn: dies inside the first charge": chargingDyingInside(
    CALL_0_EVERY_TURN,
    "charge 7",
  ),
  "call_0 every turn: dies inside the second charge": chargingDyingInside(
    CALL_0_EVERY_TURN,
    "charge 3",
  ),
  "call_0 every turn: dies inside the third charge": chargingDyingInside(
    CALL_0_EVERY_TURN,
    "charge 2",
  ),
  // Inside the charge of 3 (call_0); the charge of 4 beside it (call_1) cannot record its end.
  "two calls every turn: dies inside the second turn's charges": chargingDyingInside(
    TWO_CALLS_EVERY_TURN,
    "charge 3",
  ),
  "bad then charge: dies inside the charge": chargingDyingInside(BAD_THEN_CHARGE, "charge 7"),
  "bad then charge: dies in the model call after the charge": async (child) => {
    const first = chargingAgent(BAD_THEN_CHARGE, child.afterEffect());
    child.watch(first.model, { dieInCall: 2 });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  "bad beside charge: dies inside the charge": chargingDyingInside(BAD_BESIDE_CHARGE, "charge 7"),
  "bad and charge, then charge: dies inside the second charge": chargingDyingInside(
    BAD_AND_CHARGE_THEN_CHARGE,
    "charge 3",
  ),
  "writer as a tool: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  "writer as a tool, not instrumented: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: false,
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  "writer as a tool, model recorded only: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: "model only",
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  // Its writer records write, but has a plain SDK tool too: its run cannot say it records
  // every call, so the writer_tool call is a decision of its own, besides the write inside it.
  "writer as a tool, partly instrumented: dies inside write": async (child) => {
    const first = agentToolFixture({
      writeNeedsApproval: false,
      instrumented: "partly",
      afterEffect: child.afterEffect("write héllo 🌍"),
    });
    await runWithLedger(first.main, "go", runOptions(child.store, first.model));
  },
  // A second process, on the ledger the one above left: the resume asks about writer_tool, a
  // person rejects it, and it dies right after main's model answered that (before the run ends).
  "writer as a tool, partly instrumented, resumed, writer_tool rejected: dies after the next model call":
    async (child) => {
      const second = agentToolFixture({ writeNeedsApproval: false, instrumented: "partly" });
      second.model.calls = 1;
      const paused = await resumeRun(second.main, runOptions(child.store, second.model));
      child.asked(paused.interruptions);
      const { state, item } = firstInterruption(paused);
      state.reject(item);
      const store = child.dyingAfter(isType("model.completed"));
      await resumeRun(second.main, { ...runOptions(store, second.model), state });
    },
  // Right after the writer_tool call's request is committed: its writer has not started.
  "writer as a tool: dies right after its call is requested": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false });
    const store = child.dyingAfter(
      (event) => event.type === "tool.requested" && payloadOf(event).name === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  // Right after the writer's child run started, before its first model call was requested.
  "writer as a tool: dies right after its run started": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false });
    const store = child.dyingAfter(
      (event) => event.type === "run.started" && payloadOf(event).asToolOf === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  "writer as a tool, model recorded only: dies right after its run started": async (child) => {
    const first = agentToolFixture({ writeNeedsApproval: false, instrumented: "model only" });
    const store = child.dyingAfter(
      (event) => event.type === "run.started" && payloadOf(event).asToolOf === "writer_tool",
    );
    await runWithLedger(first.main, "go", runOptions(store, first.model));
  },
  // Outer -> mid -> inner -> charge, agents as tools two levels deep; dies inside the charge.
  "nested agent tools: dies inside charge": async (child) => {
    const first = nestedAgentToolsFixture({ afterEffect: child.afterEffect("charge 7") });
    await runWithLedger(first.outer, "go", runOptions(child.store, first.model));
  },
  // A person approved the delete of /a and rejected the one of /b; dies while /a is deleted.
  "deleting, /a approved and /b rejected: dies inside the delete of /a": async (child) => {
    const first = deletingAgent({ afterEffect: child.afterEffect("/a") });
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
    await resumeRun(first.agent, { ...runOptions(child.store, first.model), state });
  },
  "hosted MCP, approved: dies after the decision is recorded": async (child) => {
    const first = hostedMcpAgent();
    const paused = await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
    child.asked(paused.interruptions);
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const store = child.dyingAfter(isType(APPROVAL_EVENT_TYPE));
    await resumeRun(first.agent, { ...runOptions(store, first.model), state });
  },
  ...reportingScenarios,
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
  // No charge asks for approval; the process dies in the model call after both charges.
  "two charges, none asked about: dies in the third model call": async (child) => {
    const first = chargingAgent(TWO_CHARGES, child.afterEffect());
    child.watch(first.model, { dieInCall: 2 });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  // boss calls research on "lamps", then on "chairs"; dies inside the search on "chairs".
  "research twice: dies inside the second call's search": async (child) => {
    const first = researchFixture({
      secondTopic: "chairs",
      search: true,
      afterEffect: child.afterEffect("search chairs"),
    });
    await runWithLedger(first.boss, "go", runOptions(child.store, first.model));
  },
  "lookup then bad charge: dies after the lookup completed": async (child) => {
    const first = lookupThenBadChargeAgent(child.afterEffect());
    const store = child.dyingAfter(isType("tool.completed"));
    await runWithLedger(first.agent, "go", runOptions(store, first.model, "r"));
  },
  "declined charge: dies after the failure was recorded": async (child) => {
    const first = declinedChargeAgent(child.afterEffect());
    const store = child.dyingAfter(isType("tool.failed"));
    await runWithLedger(first.agent, "go", runOptions(store, first.model, "r"));
  },
  "slow charge: dies after its timeout was recorded": async (child) => {
    const first = slowChargeAgent("error_as_result", child.afterEffect());
    const store = child.dyingAfter(isType("tool.failed"));
    await runWithLedger(first.agent, "go", runOptions(store, first.model, "r"));
  },
  // Each call the MCP server answered is reported as its tool's name.
  "mcp shop: dies after the server made the charge": async (child) => {
    const first = mcpShop();
    first.server.afterCall = child.afterEffect("charge");
    await first.server.connect();
    await runWithLedger(first.agent, "sell a book", runOptions(child.store, first.model));
  },
  "run state input, charge approved: dies in the model call after the charge": runStateInputDying({
    dieInCall: 1,
  }),
  "run state input, charge approved: dies inside the charge": runStateInputDying({
    dieAfter: "charge 7",
  }),
  "shell: dies in the model call after the deploy": async (child) => {
    const first = deployingAgent(child.afterEffect());
    child.watch(first.model, { dieInCall: 1 });
    await runWithLedger(first.agent, "deploy", runOptions(child.store, first.model));
  },
  "shell: dies inside the deploy": async (child) => {
    const first = deployingAgent(child.afterEffect("ran ./deploy.sh prod"));
    await runWithLedger(first.agent, "deploy", runOptions(child.store, first.model));
  },
  // The app's onApproval approves every deploy its needsApproval asks about.
  "shell, approved by its onApproval: dies inside the deploy": async (child) => {
    const first = deployingAgent(child.afterEffect("ran ./deploy.sh prod"), {
      needsApproval: true,
      autoApprove: true,
    });
    await runWithLedger(first.agent, "deploy", runOptions(child.store, first.model));
  },
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
  "apply patch: dies in the model call after the delete": async (child) => {
    const first = cleaningAgent(child.afterEffect());
    child.watch(first.model, { dieInCall: 1 });
    await runWithLedger(first.agent, "clean up", runOptions(child.store, first.model));
  },
  // create_cart wrote the cart into the run's context (and deleted its coupon); dies right after
  // create_cart completed, before its completion (its change recorded), or after the model asked
  // for checkout.
  "cart: dies right after create_cart completed": async (child) => {
    const first = cartAgent(child.afterEffect());
    child.watch(first.model);
    await runWithLedger(first.agent, "buy", {
      ...runOptions(child.dyingAfter(isType("tool.completed")), first.model),
      context: cartContext(),
    });
  },
  "cart: dies between create_cart's context change and its completion": async (child) => {
    const first = cartAgent(child.afterEffect());
    child.watch(first.model);
    await runWithLedger(first.agent, "buy", {
      ...runOptions(child.dyingAfter(isType("x.openai-agents.context")), first.model),
      context: cartContext(),
    });
  },
  "cart: dies after the model asked for checkout": async (child) => {
    const first = cartAgent(child.afterEffect());
    child.watch(first.model);
    await runWithLedger(first.agent, "buy", {
      ...runOptions(child.dyingAfter(nth(2, isType("model.completed"))), first.model),
      context: cartContext(),
    });
  },
  // A handoff's callback, or the agent run as a tool, wrote into the context: dies right after
  // that call completed, before the charge that reads it.
  "ticket: dies right after the handoff": async (child) => {
    const first = ticketHandoffAgents(child.afterEffect());
    const store = child.dyingAfter(
      (event) => event.type === "tool.completed" && payloadOf(event).toolCallId === "call_handoff",
    );
    await runWithLedger(first.agent, "pay", { ...runOptions(store, first.model), context: {} });
  },
  "draft: dies right after the agent tool call": async (child) => {
    const first = draftingAgents(child.afterEffect());
    const store = child.dyingAfter(
      (event) => event.type === "tool.completed" && payloadOf(event).toolCallId === "call_drafter",
    );
    await runWithLedger(first.agent, "pay", { ...runOptions(store, first.model), context: {} });
  },
  "receipt redacted by path: dies in the model call after the charge": async (child) => {
    const first = receiptAgent(child.afterEffect());
    child.watch(first.model, { dieInCall: 1 });
    await runWithLedger(first.agent, "sell", {
      ...runOptions(child.store, first.model),
      redact: RECEIPT_PATH,
    });
  },
  "receipt redacted by a function: dies in the model call after the charge": async (child) => {
    const first = receiptAgent(child.afterEffect());
    child.watch(first.model, { dieInCall: 1 });
    await runWithLedger(first.agent, "sell", {
      ...runOptions(child.store, first.model),
      redact: hideReceipt,
    });
  },
  "declined charge redacted by a function: dies in the model call after it": async (child) => {
    const first = decliningAgent(child.afterEffect());
    child.watch(first.model, { dieInCall: 1 });
    await runWithLedger(first.agent, "sell", {
      ...runOptions(child.store, first.model),
      redact: hideReceipt,
    });
  },
} satisfies Record<string, Scenario>;

export type CrashScenario = keyof typeof CRASH_SCENARIOS;

export function isCrashScenario(name: string): name is CrashScenario {
  return Object.hasOwn(CRASH_SCENARIOS, name);
}

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
