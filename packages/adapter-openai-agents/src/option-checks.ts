import {
  assertId,
  assertKnownKeys,
  childPath,
  InvalidArgumentError,
  InvalidEventError,
  type KnownKeys,
  TOOL_EFFECT_KINDS,
  type ToolEffect,
  validateRedaction,
} from "@agent-ledger/core";
import { protocol, RunState } from "@openai/agents";
import type { RunStateCheckpointOptions } from "./checkpoint.js";
import type { InstrumentAgentOptions } from "./instrument-agent.js";
import type { LedgerHandoffOptions } from "./ledger-handoff.js";
import type { LedgerModelOptions } from "./ledger-model.js";
import type { LedgerToolOptions } from "./ledger-tool.js";
import { EDITOR_METHODS } from "./local-call-ids.js";
import type {
  LedgerRunOptions,
  ResumeRunOptions,
  RunWithLedgerOptions,
} from "./run-with-ledger.js";

// Each public function checks its arguments and options before anything runs: a bad value found
// later would be found after a model call was paid for (maxTurns is read by the SDK only when it
// saves the RunState; an effect only when the model calls the tool), or as a TypeError naming
// nothing. `$` is the options; an argument beside them is `$.<its name>` (`$.agent`, `$.input`).

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "string") return typeof value;
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}

function assertObject(value: unknown, path: string, what: string): asserts value is object {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(path, `${what}, got ${describe(value)}`);
}

function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === "function")
  );
}

/** Refuses an argument unless `valid`: at `$.<name>`, `message` saying what it must be. */
function assertArgument(
  value: unknown,
  name: string,
  valid: (value: unknown) => boolean,
  message: string,
): void {
  if (!valid(value))
    throw new InvalidArgumentError(`$.${name}`, `${message}, got ${describe(value)}`);
}

// What the adapter reads of an agent: instrumentAgent replaces its `clone` and `getMcpTools`.
const isAgent = (value: unknown) =>
  hasMethods(value, ["clone", "asTool", "getMcpTools", "getAllTools"]) &&
  typeof (value as { name?: unknown }).name === "string";

function assertAgent(agent: unknown, call: string): void {
  assertArgument(agent, "agent", isAgent, `${call} needs an Agent (new Agent({ name, ... }))`);
}

// What the ledger reads of a RunState: resumeRun's `state` and saveRunStateCheckpoint's.
const isRunState = (value: unknown) =>
  hasMethods(value, ["approve", "reject", "getInterruptions", "toString"]);

// What ledgerModel and ledgerTool call on a recorder of the app's.
const RECORDER_METHODS = [
  "beforeModelCall",
  "modelCompleted",
  "modelFailed",
  "beforeToolCall",
  "toolCompleted",
  "toolFailed",
  "child",
];

function assertRecorderOption(given: Record<string, unknown>): void {
  assertOptional(
    given,
    "recorder",
    (value) => hasMethods(value, RECORDER_METHODS),
    "a SessionRecorder",
  );
}

/**
 * Refuses `options[key]` unless it is absent or `valid`: at `$.<key>`, or where `at` says (the
 * path of the object it is read from, and what that object is, leading the message).
 */
function assertOptional(
  options: Record<string, unknown>,
  key: string,
  valid: (value: unknown) => boolean,
  expected: string,
  at?: { path: string; what: string },
): void {
  const value = options[key];
  if (value !== undefined && !valid(value))
    throw new InvalidArgumentError(
      at?.path ?? `$.${key}`,
      `${at ? `${at.what}: ` : ""}${key} must be ${expected}, got ${describe(value)}`,
    );
}

/** `idempotent` and `effect`, as ledgerTool takes them (and an MCP tool's declaration gives them). */
function assertEffectFields(
  given: Record<string, unknown>,
  at?: { path: string; what: string },
): void {
  assertOptional(given, "idempotent", (value) => typeof value === "boolean", "a boolean", at);
  assertOptional(
    given,
    "effect",
    (value) => TOOL_EFFECT_KINDS.includes(value as ToolEffect["kind"]),
    `one of ${TOOL_EFFECT_KINDS.map((kind) => `"${kind}"`).join(", ")}`,
    at,
  );
}

// The options each function takes (typed so, the compiler keeps each list complete). Any other
// is refused: the SDK's other run options (`session`, `previousResponseId`, `errorHandlers`...)
// are not passed on, and a misspelt one (`maxturns`, `abortSignal`) would be dropped without a
// word.
const SHARED_OPTIONS: KnownKeys<LedgerRunOptions> = {
  store: true,
  sessionId: true,
  runner: true,
  modelProvider: true,
  maxTurns: true,
  context: true,
  signal: true,
  redact: true,
  mcpToolEffect: true,
};
const RUN_OPTIONS: KnownKeys<RunWithLedgerOptions> = {
  ...SHARED_OPTIONS,
  runId: true,
  stream: true,
};
const RESUME_OPTIONS: KnownKeys<ResumeRunOptions> = { ...SHARED_OPTIONS, runId: true, state: true };
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

function isAbortSignal(value: unknown): boolean {
  const signal = value as Partial<AbortSignal> | null;
  return (
    typeof signal === "object" &&
    signal !== null &&
    typeof signal.aborted === "boolean" &&
    typeof signal.addEventListener === "function" &&
    typeof signal.throwIfAborted === "function"
  );
}

/**
 * The SDK writes the run's context into its RunState (`toString`), and the ledger checkpoints
 * that state at every interruption and at the end: a context JSON cannot write (a client with a
 * cycle, a bigint) would fail the run there, after its calls were made and paid for.
 */
function assertContextWritable(context: unknown): void {
  if (context === undefined) return;
  try {
    JSON.stringify(context); // a RunContext writes its context by its toJSON()
  } catch (error) {
    throw new InvalidArgumentError(
      "$.context",
      `the SDK saves the context in the RunState, which the ledger checkpoints as JSON, and this one cannot be written as JSON (${error instanceof Error ? error.message.split("\n")[0] : String(error)}): keep such objects out of it or give them a toJSON()`,
      { cause: error },
    );
  }
}

/**
 * The options of `runWithLedger` (`resume: false`) or `resumeRun` (`resume: true`), checked:
 * `invalid-argument` at the option's path (`$.maxTurns`; `$.foo` for an option neither
 * takes), or `invalid-event` for an id that is not one, as the recorder says it.
 */
function assertRunOptions(options: unknown, { resume }: { resume: boolean }): void {
  const call = resume ? "resumeRun" : "runWithLedger";
  assertObject(
    options,
    "$",
    `${call} needs options { store, sessionId${resume ? ", runId" : ""}, ... }`,
  );
  const given = options as Record<string, unknown>;
  assertKnownKeys(given, resume ? RESUME_OPTIONS : RUN_OPTIONS, call);
  if (!hasMethods(given.store, ["append", "readRun", "readSession"]))
    throw new InvalidArgumentError(
      "$.store",
      `${call} needs an EventStore in options.store (openStore(url) makes one), got ${describe(given.store)}`,
    );
  assertId(given.sessionId, "$.sessionId");
  // No id is invalid-event, as a malformed one is (the recorder's word for ids).
  if (resume && given.runId === undefined)
    throw new InvalidEventError(
      "$.runId",
      "resumeRun continues one run: give the runId runWithLedger returned (result.runId), or one `agent-ledger inspect` lists for the session",
    );
  if (given.runId !== undefined) assertId(given.runId, "$.runId");
  assertOptional(
    given,
    "maxTurns",
    (value) => typeof value === "number" && Number.isSafeInteger(value) && value > 0,
    "a positive integer",
  );
  assertOptional(
    given,
    "runner",
    (value) =>
      hasMethods(value, ["run"]) &&
      typeof (value as { config?: unknown }).config === "object" &&
      (value as { config?: unknown }).config !== null,
    "a Runner",
  );
  assertOptional(
    given,
    "modelProvider",
    (value) => hasMethods(value, ["getModel"]),
    "a ModelProvider ({ getModel })",
  );
  assertOptional(given, "signal", isAbortSignal, "an AbortSignal");
  assertContextWritable(given.context);
  if (given.redact !== false) validateRedaction(given.redact, "$.redact");
  assertMcpToolEffectOption(given);
  if (resume)
    assertOptional(
      given,
      "state",
      isRunState,
      "a RunState (result.state, or RunState.fromString(agent, text))",
    );
  else assertOptional(given, "stream", (value) => typeof value === "boolean", "a boolean");
}

/**
 * An input the SDK's run takes: a string, a RunState (told as the SDK tells one), or input items,
 * each one its RunState can save (the SDK checks them only when it saves the state, after the
 * model was called: the run would fail at its first checkpoint).
 */
function assertRunInput(input: unknown): void {
  if (typeof input === "string" || input instanceof RunState) return;
  assertArgument(
    input,
    "input",
    Array.isArray,
    "runWithLedger's input is what the SDK's run takes: a string, an array of input items or a RunState",
  );
  (input as unknown[]).forEach((item, index) => {
    if (protocol.ModelItem.safeParse(item).success) return;
    const given =
      typeof item === "object" && item !== null && !Array.isArray(item)
        ? `{ ${Object.keys(item).join(", ")} }`
        : describe(item);
    throw new InvalidArgumentError(
      childPath("$.input", index),
      `not an input item the SDK takes (user("..."), { role: "user", content: "..." }, an item of a result's history), got ${given}`,
    );
  });
}

/** `runWithLedger(agent, input, options)`, checked: `invalid-argument` at the argument's path. */
export function assertRunWithLedgerArguments(
  agent: unknown,
  input: unknown,
  options: unknown,
): void {
  assertAgent(agent, "runWithLedger");
  assertRunInput(input);
  assertRunOptions(options, { resume: false });
}

/** `resumeRun(agent, options)`, checked: `invalid-argument` at the argument's path. */
export function assertResumeRunArguments(agent: unknown, options: unknown): void {
  assertAgent(agent, "resumeRun");
  assertRunOptions(options, { resume: true });
}

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

function assertMcpToolEffectOption(options: Record<string, unknown>): void {
  assertOptional(
    options,
    "mcpToolEffect",
    (value) => typeof value === "function",
    "a function ({ name }) => ({ effect?, idempotent? }) | undefined",
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
