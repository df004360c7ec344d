// What each crash child runs (crash-scenarios.test.child.ts) until it dies at its crash point:
// the first process of a crash test, whose ledger the test then resumes as the next process.
import type { NewEvent } from "@agent-ledger/core";
import { resumeRun, runWithLedger } from "../index.js";
import { AGENT_TOOL_CRASH_SCENARIOS } from "./agent-tool-crash-scenarios.test.data.js";
import { APPROVAL_CRASH_SCENARIOS } from "./approval-crash-scenarios.test.data.js";
import { recordingBareToolNames } from "./bare-tool-names.js";
import { cartAgent, cartContext } from "./cart-agent.js";
import {
  BAD_AND_CHARGE_THEN_CHARGE,
  BAD_BESIDE_CHARGE,
  BAD_THEN_CHARGE,
  CALL_0_EVERY_TURN,
  chargingAgent,
  declinedChargeAgent,
  lookupThenBadChargeAgent,
  slowChargeAgent,
  TWO_CALLS_EVERY_TURN,
  TWO_CHARGES,
} from "./charging-agents.js";
import { registryAgent } from "./client-tool-search-agent.js";
import { draftingAgents, ticketHandoffAgents } from "./context-agents.js";
import { isType, nth, payloadOf, type Scenario } from "./crash-points.test.data.js";
import { fixture } from "./fixture.js";
import {
  approvingMcpRegistryAgent,
  mcpRegistryAgent,
  namespacedRegistryAgent,
  twoNamespacesRegistryAgent,
} from "./loading-registry-agents.js";
import { cleaningAgent, deployingAgent } from "./local-tool-agents.js";
import { mcpShop } from "./mcp-agents.js";
import { MODEL_CALL_CRASH_SCENARIOS } from "./model-call-crash-scenarios.test.data.js";
import { decliningAgent, hideReceipt, RECEIPT_PATH, receiptAgent } from "./receipt-agent.js";
import { firstInterruption, runOptions } from "./recorded-run.js";
import { AWKWARD_OUTPUTS, type AwkwardOutput, reportingAgent } from "./reporting-agent.js";
import { LARGE_TEXT, savingAgent } from "./saving-agent.js";

// The shop fixture's run, dying right after its tool performed `effect`.
const shopDyingInside =
  (effect: string): Scenario =>
  async (child) => {
    const first = fixture({ afterEffect: child.afterEffect(effect) });
    child.watch(first.model);
    await runWithLedger(first.main, "sell a book", runOptions(child.store, first.model));
  };

// A tool.completed of either forecast of the two namespaces' run.
const bothForecastsCompleted = (event: NewEvent) =>
  event.type === "tool.completed" &&
  ["call_weather", "call_climate"].includes(String(payloadOf(event).toolCallId));

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

/** The scenario where the reporting agent's tool returns `output` (see AWKWARD_OUTPUTS). */
export function reportingScenario(output: AwkwardOutput) {
  return `reporting ${output}: dies after the second model call` as const;
}

// Each group's scenarios are in a file of its own; the rest (calls of the agent's own tools, the
// context they write, redaction) are here.
export const CRASH_SCENARIOS = {
  ...APPROVAL_CRASH_SCENARIOS,
  ...MODEL_CALL_CRASH_SCENARIOS,
  ...AGENT_TOOL_CRASH_SCENARIOS,
  "shop: dies after the handoff's model call": async (child) => {
    const first = fixture({ afterEffect: child.afterEffect() });
    child.watch(first.model);
    const store = child.dyingAfter(nth(3, isType("model.completed")));
    await runWithLedger(first.main, "sell a book", runOptions(store, first.model));
  },
  "shop: dies inside charge": shopDyingInside("charge 7"),
  "shop: dies inside lookup": shopDyingInside("lookup book"),
  // Between calls: the charge's tool.completed committed, the next model call not yet requested.
  "shop: dies after charge completed": async (child) => {
    const first = fixture({ afterEffect: child.afterEffect() });
    const store = child.dyingAfter(
      (event) => event.type === "tool.completed" && payloadOf(event).toolCallId === "call_charge",
    );
    await runWithLedger(first.main, "sell a book", runOptions(store, first.model));
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
  // Two namespaces each hold a tool named forecast: both are called in one response. Recorded
  // as the adapter records now, or as it did before it named the namespace (the bare name).
  "two namespaces: dies after both forecasts completed": async (child) => {
    const first = twoNamespacesRegistryAgent();
    const store = child.dyingAfter(nth(2, bothForecastsCompleted));
    await runWithLedger(first.agent, "go", runOptions(store, first.model));
  },
  "two namespaces recorded under bare names: dies after both forecasts completed": async (
    child,
  ) => {
    const first = twoNamespacesRegistryAgent();
    const store = recordingBareToolNames(child.dyingAfter(nth(2, bothForecastsCompleted)));
    await runWithLedger(first.agent, "go", runOptions(store, first.model));
  },
  "MCP registry: dies in the model call after the provider's MCP call": async (child) => {
    const first = mcpRegistryAgent();
    child.watch(first.model, { dieInCall: 2 });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  // The search loaded a hosted MCP server whose tools need approval; a person approved the
  // request, and the process died in the model call that sent the decision.
  "MCP registry, approved: dies in the model call after the decision": async (child) => {
    const first = approvingMcpRegistryAgent();
    child.watch(first.model, { dieInCall: 2 });
    const paused = await runWithLedger(
      first.agent,
      "delete old",
      runOptions(child.store, first.model),
    );
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    child.decided(state);
    await resumeRun(first.agent, { ...runOptions(child.store, first.model), state });
  },
  "saving: dies inside save": async (child) => {
    const first = savingAgent(child.afterEffect(`save ${LARGE_TEXT.length} characters`));
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
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
  ...reportingScenarios,
  // No charge asks for approval; the process dies in the model call after both charges.
  "two charges, none asked about: dies in the third model call": async (child) => {
    const first = chargingAgent(TWO_CHARGES, child.afterEffect());
    child.watch(first.model, { dieInCall: 2 });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
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
