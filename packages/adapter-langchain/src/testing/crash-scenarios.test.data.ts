import { agentCrashes } from "./agent.test.data.js";
import { agentStreamCrashes } from "./agent-stream-crash.test.data.js";
import { callbackHandlerCrashes } from "./callback-handler.test.data.js";
import type { CrashScenario } from "./crash-point.js";
import { idlessCallsCrashes } from "./idless-calls.test.data.js";
import { ledgerMiddlewareCrashes } from "./ledger-middleware.test.data.js";
import { modelInFlightCrashes } from "./model-in-flight.test.data.js";
import { modelRetryCrashes } from "./model-retry.test.data.js";
import { modelThreadsCrashes } from "./model-threads.test.data.js";
import { modelWindowCrashes } from "./model-window.test.data.js";
import { nestedDecisionCrashes } from "./nested-decision.test.data.js";
import { nestedMatchingCrashes } from "./nested-matching.test.data.js";
import { nestedToolCallCrashes } from "./nested-tool-call.test.data.js";
import { nodeRetryCrashes } from "./node-retry.test.data.js";
import { otherRunCallsCrashes } from "./other-run-calls.test.data.js";
import { otherSessionCallsCrashes } from "./other-session-calls.test.data.js";
import { redactedCheckpointsCrashes } from "./redacted-checkpoints.test.data.js";
import { refusedSiblingCrashes } from "./refused-sibling.test.data.js";
import { restoreMessagesCrashes } from "./restore-messages.test.data.js";
import { restoreThreadsCrashes } from "./restore-threads.test.data.js";
import { retrieverCrashes } from "./retriever.test.data.js";
import { structuredCrashes } from "./structured-crash.test.data.js";
import { subgraphRestoreCrashes } from "./subgraph-restore.test.data.js";
import { toolArtifactCrashes } from "./tool-artifact.test.data.js";
import { toolCallThreadsCrashes } from "./tool-call-threads.test.data.js";
import { toolEffectCrashes } from "./tool-effect.test.data.js";
import { toolNodeCrashes } from "./tool-node.test.data.js";
import { toolRetryCrashes } from "./tool-retry.test.data.js";
import { unresolvedInterruptCrashes } from "./unresolved-interrupt.test.data.js";

/** Every scenario a crash child can run, by the name a test gives it. */
export const crashScenarios = {
  ...agentCrashes,
  ...agentStreamCrashes,
  ...callbackHandlerCrashes,
  ...idlessCallsCrashes,
  ...ledgerMiddlewareCrashes,
  ...modelInFlightCrashes,
  ...modelRetryCrashes,
  ...modelThreadsCrashes,
  ...modelWindowCrashes,
  ...nestedDecisionCrashes,
  ...nestedMatchingCrashes,
  ...nestedToolCallCrashes,
  ...nodeRetryCrashes,
  ...otherRunCallsCrashes,
  ...otherSessionCallsCrashes,
  ...redactedCheckpointsCrashes,
  ...refusedSiblingCrashes,
  ...restoreMessagesCrashes,
  ...restoreThreadsCrashes,
  ...retrieverCrashes,
  ...structuredCrashes,
  ...subgraphRestoreCrashes,
  ...toolArtifactCrashes,
  ...toolCallThreadsCrashes,
  ...toolEffectCrashes,
  ...toolNodeCrashes,
  ...toolRetryCrashes,
  ...unresolvedInterruptCrashes,
} satisfies Record<string, CrashScenario>;

export type CrashScenarioName = keyof typeof crashScenarios;

export function isCrashScenario(name: string): name is CrashScenarioName {
  return Object.hasOwn(crashScenarios, name);
}
