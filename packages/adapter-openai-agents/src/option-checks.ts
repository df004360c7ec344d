import { assertKnownKeys, InvalidArgumentError, type KnownKeys } from "@agent-ledger/core";
import {
  assertAgent,
  assertArgument,
  assertEffectFields,
  assertMcpToolEffectOption,
  assertObject,
  assertOptional,
  assertRecorderOption,
  describe,
  hasMethods,
  isRunState,
} from "./argument-checks.js";
import type { RunStateCheckpointOptions } from "./checkpoint.js";
import type { InstrumentAgentOptions } from "./instrument-agent.js";
import type { LedgerHandoffOptions } from "./ledger-handoff.js";
import type { LedgerModelOptions } from "./ledger-model.js";
import type { LedgerToolOptions } from "./ledger-tool.js";
import { EDITOR_METHODS } from "./local-call-ids.js";

// The options each function takes (typed so, the compiler keeps each list complete), as for a
// run's (run-option-checks.ts): any other is refused.
const LEDGER_TOOL_OPTIONS: KnownKeys<LedgerToolOptions> = {
  idempotent: true,
  effect: true,
  recorder: true,
};
const LEDGER_HANDOFF_OPTIONS: KnownKeys<LedgerHandoffOptions> = { idempotent: true, effect: true };
const LEDGER_MODEL_OPTIONS: KnownKeys<LedgerModelOptions> = { recorder: true };
const CHECKPOINT_OPTIONS: KnownKeys<RunStateCheckpointOptions> = {
  kind: true,
  currentRunId: true,
  replayApprovals: true,
  awaitingDecision: true,
};
const INSTRUMENT_OPTIONS: KnownKeys<InstrumentAgentOptions> = { mcpToolEffect: true };

/** `ledgerTool(tool, options)`, checked: `invalid-argument` at the argument's path. */
export function assertLedgerToolArguments(tool: unknown, options: unknown): void {
  assertArgument(
    tool,
    "tool",
    (value) => hasMethods(value, ["invoke"]) && (value as { type?: unknown }).type === "function",
    "ledgerTool wraps a function tool (tool({...}))",
  );
  assertToolOptions(options, "ledgerTool");
}

/** The options of `ledgerTool` or `ledgerLocalTool` (`call`): `{ idempotent?, effect?, recorder? }`. */
function assertToolOptions(options: unknown, call: string): void {
  assertObject(options, "$", `${call}'s options are { idempotent?, effect?, recorder? }`);
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, LEDGER_TOOL_OPTIONS, call);
  assertEffectFields(given);
  assertRecorderOption(given);
}

/** `ledgerLocalTool(tool, options)`, checked: `invalid-argument` at the argument's path. */
export function assertLedgerLocalToolArguments(tool: unknown, options: unknown): void {
  assertArgument(
    tool,
    "tool",
    (value) => {
      const given = value as { type?: unknown; shell?: unknown; editor?: unknown } | null;
      if (given?.type === "shell") return hasMethods(given.shell, ["run"]);
      return given?.type === "apply_patch" && hasMethods(given.editor, EDITOR_METHODS);
    },
    "ledgerLocalTool wraps a local shell tool (shellTool({ shell })) or an apply-patch tool (applyPatchTool({ editor }))",
  );
  assertToolOptions(options, "ledgerLocalTool");
}

/** `ledgerHandoff(handoff, options)`, checked: `invalid-argument` at the argument's path. */
export function assertLedgerHandoffArguments(handoff: unknown, options: unknown): void {
  assertArgument(
    handoff,
    "handoff",
    (value) =>
      hasMethods(value, ["onInvokeHandoff"]) &&
      typeof (value as { toolName?: unknown }).toolName === "string",
    "ledgerHandoff wraps a handoff (handoff(agent, {...}))",
  );
  assertObject(options, "$", "ledgerHandoff's options are { idempotent?, effect? }");
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, LEDGER_HANDOFF_OPTIONS, "ledgerHandoff");
  assertEffectFields(given);
}

function assertLedgerModelOptions(options: unknown, call: string): void {
  assertObject(options, "$", `${call}'s options are { recorder? }`);
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, LEDGER_MODEL_OPTIONS, call);
  assertRecorderOption(given);
}

/** `ledgerModel(model, options)`, checked: `invalid-argument` at the argument's path. */
export function assertLedgerModelArguments(model: unknown, options: unknown): void {
  assertArgument(
    model,
    "model",
    (value) => hasMethods(value, ["getResponse", "getStreamedResponse"]),
    "ledgerModel wraps a Model ({ getResponse, getStreamedResponse })",
  );
  assertLedgerModelOptions(options, "ledgerModel");
}

/** `ledgerModelProvider(provider, options)`, checked: `invalid-argument` at the argument's path. */
export function assertLedgerModelProviderArguments(provider: unknown, options: unknown): void {
  assertArgument(
    provider,
    "provider",
    (value) => hasMethods(value, ["getModel"]),
    "ledgerModelProvider wraps a ModelProvider ({ getModel })",
  );
  assertLedgerModelOptions(options, "ledgerModelProvider");
}

/** `saveRunStateCheckpoint(recorder, state, options)`, checked: `invalid-argument` at the path. */
export function assertSaveCheckpointArguments(
  recorder: unknown,
  state: unknown,
  options: unknown,
): void {
  const call = "saveRunStateCheckpoint";
  assertArgument(
    recorder,
    "recorder",
    (value) => hasMethods(value, ["checkpoint"]),
    `${call} needs a SessionRecorder`,
  );
  assertArgument(state, "state", isRunState, `${call} saves a RunState (result.state)`);
  assertObject(
    options,
    "$",
    `${call}'s options are { ${Object.keys(CHECKPOINT_OPTIONS).join(", ")} }`,
  );
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, CHECKPOINT_OPTIONS, call);
  if (given.kind !== "interruption" && given.kind !== "final")
    throw new InvalidArgumentError(
      "$.kind",
      `kind must be "interruption" or "final", got ${describe(given.kind)}`,
    );
  if (typeof given.currentRunId !== "string")
    throw new InvalidArgumentError(
      "$.currentRunId",
      `currentRunId must be the id of the run whose agent is current, got ${describe(given.currentRunId)}`,
    );
  for (const key of ["replayApprovals", "awaitingDecision"])
    assertOptional(given, key, Array.isArray, "an array");
}

/** `loadRunStateCheckpoint(agent, payload)`, checked: `invalid-argument` at the argument's path. */
export function assertLoadCheckpointArguments(agent: unknown, payload: unknown): void {
  assertAgent(agent, "loadRunStateCheckpoint");
  assertArgument(
    payload,
    "payload",
    (value) =>
      typeof value === "object" &&
      value !== null &&
      typeof (value as { sdkVersion?: unknown }).sdkVersion === "string",
    "loadRunStateCheckpoint loads a RunState checkpoint's payload ({ sdkVersion, state, ... })",
  );
}

/** `instrumentAgent(agent, options)`, checked: `invalid-argument` at the argument's path. */
export function assertInstrumentArguments(agent: unknown, options: unknown): void {
  assertAgent(agent, "instrumentAgent");
  assertObject(options, "$", "instrumentAgent's options are { mcpToolEffect? }");
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, INSTRUMENT_OPTIONS, "instrumentAgent");
  assertMcpToolEffectOption(given);
}

/**
 * What `mcpToolEffect` declared for the MCP tool `name`, checked when the tool is listed (the
 * function is the app's, called at run time): `invalid-argument` at `$.mcpToolEffect`, naming
 * the tool, so a bad declaration stops the run before the model can ask for the tool.
 */
export function assertMcpToolDeclaration(declared: unknown, name: string): void {
  if (declared === undefined) return;
  const path = "$.mcpToolEffect";
  const what = `mcpToolEffect's answer for MCP tool ${JSON.stringify(name)}`;
  assertObject(declared, path, `${what} must be { effect?, idempotent? } or undefined`);
  const given = declared as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (key !== "effect" && key !== "idempotent")
      throw new InvalidArgumentError(
        path,
        `${what} has ${JSON.stringify(key)}: it may only say effect and idempotent`,
      );
  assertEffectFields(given, { path, what });
}
