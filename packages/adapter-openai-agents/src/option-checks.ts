import {
  assertId,
  InvalidArgumentError,
  TOOL_EFFECT_KINDS,
  type ToolEffect,
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

function assertOptional(
  options: Record<string, unknown>,
  key: string,
  valid: (value: unknown) => boolean,
  expected: string,
): void {
  const value = options[key];
  if (value !== undefined && !valid(value))
    throw new InvalidArgumentError(
      `$.${key}`,
      `${key} must be ${expected}, got ${describe(value)}`,
    );
}

/**
 * The options of `runWithLedger` (`resume: false`) or `resumeRun` (`resume: true`), checked:
 * `invalid-argument` at the option's path (`$.maxTurns`), or `invalid-event` for an id that
 * is not one, as the recorder says it.
 */
export function assertRunOptions(options: unknown, { resume }: { resume: boolean }): void {
  const call = resume ? "resumeRun" : "runWithLedger";
  assertObject(
    options,
    "$",
    `${call} needs options { store, sessionId${resume ? ", runId" : ""}, ... }`,
  );
  const given = options as Record<string, unknown>;
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
  assertOptional(given, "idempotent", (value) => typeof value === "boolean", "a boolean");
  assertOptional(
    given,
    "effect",
    (value) => TOOL_EFFECT_KINDS.includes(value as ToolEffect["kind"]),
    `one of ${TOOL_EFFECT_KINDS.map((kind) => `"${kind}"`).join(", ")}`,
  );
  assertOptional(
    given,
    "recorder",
    (value) => hasMethods(value, ["beforeToolCall", "toolCompleted", "child"]),
    "a SessionRecorder",
  );
}
