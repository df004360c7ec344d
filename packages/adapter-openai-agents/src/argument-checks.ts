import { InvalidArgumentError, TOOL_EFFECT_KINDS, type ToolEffect } from "@agent-ledger/core";

// Each public function checks its arguments and options before anything runs: a bad value found
// later would be found after a model call was paid for (maxTurns is read by the SDK only when it
// saves the RunState; an effect only when the model calls the tool), or as a TypeError naming
// nothing. `$` is the options; an argument beside them is `$.<its name>` (`$.agent`, `$.input`).

export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value !== "string") return typeof value;
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
}

export function assertObject(value: unknown, path: string, what: string): asserts value is object {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(path, `${what}, got ${describe(value)}`);
}

export function hasMethods(value: unknown, names: readonly string[]): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    names.every((name) => typeof (value as Record<string, unknown>)[name] === "function")
  );
}

/** Refuses an argument unless `valid`: at `$.<name>`, `message` saying what it must be. */
export function assertArgument(
  value: unknown,
  name: string,
  valid: (value: unknown) => boolean,
  message: string,
): void {
  if (!valid(value))
    throw new InvalidArgumentError(`$.${name}`, `${message}, got ${describe(value)}`);
}

// What the adapter reads of an agent: instrumentAgent replaces its `clone` and `getMcpTools`.
export const isAgent = (value: unknown) =>
  hasMethods(value, ["clone", "asTool", "getMcpTools", "getAllTools"]) &&
  typeof (value as { name?: unknown }).name === "string";

export function assertAgent(agent: unknown, call: string): void {
  assertArgument(agent, "agent", isAgent, `${call} needs an Agent (new Agent({ name, ... }))`);
}

// What the ledger reads of a RunState: resumeRun's `state` and saveRunStateCheckpoint's.
export const isRunState = (value: unknown) =>
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

export function assertRecorderOption(given: Record<string, unknown>): void {
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
export function assertOptional(
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
export function assertEffectFields(
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

export function assertMcpToolEffectOption(options: Record<string, unknown>): void {
  assertOptional(
    options,
    "mcpToolEffect",
    (value) => typeof value === "function",
    "a function ({ name }) => ({ effect?, idempotent? }) | undefined",
  );
}
