import {
  assertId,
  childPath,
  InvalidArgumentError,
  TOOL_EFFECT_KINDS,
  type ToolEffect,
  validateRedaction,
} from "@agent-ledger/core";

// Each public function checks its options before anything runs: a bad value found later would
// be found after a model call was paid for (maxTurns is read by the SDK only when it saves the
// RunState; an effect only when the model calls the tool), or as a TypeError naming nothing.

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? JSON.stringify(value) : typeof value;
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

// The options each function takes. Any other is refused: the SDK's other run options
// (`session`, `previousResponseId`, `errorHandlers`...) are not passed on, and a misspelt one
// (`maxturns`, `abortSignal`) would be dropped without a word.
const SHARED_OPTIONS = [
  "store",
  "sessionId",
  "runId",
  "runner",
  "modelProvider",
  "maxTurns",
  "context",
  "signal",
  "redact",
  "mcpToolEffect",
];
const RUN_OPTIONS = [...SHARED_OPTIONS, "stream"];
const RESUME_OPTIONS = [...SHARED_OPTIONS, "state"];

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
export function assertRunOptions(options: unknown, { resume }: { resume: boolean }): void {
  const call = resume ? "resumeRun" : "runWithLedger";
  assertObject(
    options,
    "$",
    `${call} needs options { store, sessionId${resume ? ", runId" : ""}, ... }`,
  );
  const given = options as Record<string, unknown>;
  const known = resume ? RESUME_OPTIONS : RUN_OPTIONS;
  for (const key of Object.keys(given))
    if (!known.includes(key))
      throw new InvalidArgumentError(
        childPath("$", key),
        `${call} has no option ${JSON.stringify(key)} (its options: ${known.join(", ")})`,
      );
  if (!hasMethods(given.store, ["append", "readRun", "readSession"]))
    throw new InvalidArgumentError(
      "$.store",
      `${call} needs an EventStore in options.store (openStore(url) makes one), got ${describe(given.store)}`,
    );
  assertId(given.sessionId, "$.sessionId");
  if (resume || given.runId !== undefined) assertId(given.runId, "$.runId");
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
      (value) => hasMethods(value, ["approve", "reject", "getInterruptions", "toString"]),
      "a RunState (result.state, or RunState.fromString(agent, text))",
    );
  else assertOptional(given, "stream", (value) => typeof value === "boolean", "a boolean");
}

/** The options of `ledgerTool`, checked: `invalid-argument` at the option's path. */
export function assertLedgerToolOptions(options: unknown): void {
  assertObject(options, "$", "ledgerTool's options are { idempotent?, effect?, recorder? }");
  const given = options as Record<string, unknown>;
  assertEffectFields(given);
  assertOptional(
    given,
    "recorder",
    (value) => hasMethods(value, ["beforeToolCall", "toolCompleted", "child"]),
    "a SessionRecorder",
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

/** The options of `instrumentAgent`, checked: `invalid-argument` at the option's path. */
export function assertInstrumentOptions(options: unknown): void {
  assertObject(options, "$", "instrumentAgent's options are { mcpToolEffect? }");
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given))
    if (key !== "mcpToolEffect")
      throw new InvalidArgumentError(
        childPath("$", key),
        `instrumentAgent has no option ${JSON.stringify(key)} (its options: mcpToolEffect)`,
      );
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
