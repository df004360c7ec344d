import {
  assertKnownKeys,
  childPath,
  InvalidArgumentError,
  type KnownKeys,
  type SessionRecorder,
  TOOL_EFFECT_KINDS,
  type ToolEffect,
} from "@agent-ledger/core";

// Checked when the middleware or the wrapper is made: a bad option found at the first call is
// found after the model call before it was paid for, or never (a string where a list of names
// was meant still answers `includes`).

// What the adapter calls on a recorder. Checked by shape, not `instanceof`: two copies of
// @agent-ledger/core in one application make recorders of two classes.
const RECORDER_METHODS = [
  "startRun",
  "beforeModelCall",
  "sameModelRequest",
  "modelCompleted",
  "modelFailed",
  "retry",
  "beforeToolCall",
  "toolCompleted",
  "toolFailed",
  "abandon",
] as const;

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
  return typeof value === "object" ? "an object" : String(typeof value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function looksLikeRecorder(value: unknown): value is SessionRecorder {
  return (
    isObject(value) &&
    RECORDER_METHODS.every(
      (method) => typeof (value as Record<string, unknown>)[method] === "function",
    )
  );
}

/** The names of `names`, for a message: `a, b`, or `none`. */
function listed(names: readonly string[]): string {
  return names.length > 0 ? names.join(", ") : "none";
}

/**
 * An options object of `what` (the entry point) with no key but those of `known` (`shape` says
 * what it looks like, for the message of anything else): for the entry points that take no
 * recorder. A misspelt option (`redcat` for `redact`) would otherwise be left out without a
 * word, and what it was meant to do not done.
 */
export function checkedOptionsObject<T>(
  options: unknown,
  known: KnownKeys<T>,
  what: string,
  shape: string,
): T {
  if (!isObject(options))
    throw new InvalidArgumentError("$", `expected options ${shape}, got ${describe(options)}`);
  assertKnownKeys(options, known, what);
  return options as T;
}

/**
 * The options object of an adapter entry point (`what`), with its `recorder` checked, and no key
 * but those of `known`.
 */
export function checkedOptions<T extends { recorder: SessionRecorder }>(
  options: unknown,
  known: KnownKeys<T>,
  what: string,
): T {
  if (!isObject(options))
    throw new InvalidArgumentError("$", `expected options { recorder }, got ${describe(options)}`);
  if (!looksLikeRecorder(options.recorder)) {
    const hint = looksLikeRecorder(options)
      ? ": pass the recorder as { recorder }"
      : `, got ${describe(options.recorder)}`;
    throw new InvalidArgumentError("$.recorder", `expected a SessionRecorder${hint}`);
  }
  assertKnownKeys(options, known, what);
  return options as T;
}

/**
 * The tool set given to `wrapTools` (`{ [name]: tool }`), each tool an object with `execute`
 * a function or absent: anything else would fail at the tool's first call, once its request
 * is recorded. Returns the names of its tools.
 */
export function checkedToolSet(tools: unknown, path: string): readonly string[] {
  if (!isObject(tools))
    throw new InvalidArgumentError(
      path,
      `expected the tool set ({ [name]: tool }), as given to generateText, got ${describe(tools)}`,
    );
  for (const [name, tool] of Object.entries(tools)) {
    const toolPath = childPath(path, name);
    if (!isObject(tool))
      throw new InvalidArgumentError(toolPath, `expected a tool, got ${describe(tool)}`);
    checkedOptional(tool.execute, childPath(toolPath, "execute"), "function");
  }
  return Object.keys(tools);
}

/**
 * Refuses a name that is none of the tools given: a misspelt one would leave its tool not
 * idempotent (or of effect `unknown`, or not streamed) without a word.
 */
function checkedToolName(name: string, path: string, tools: readonly string[]): void {
  if (!tools.includes(name))
    throw new InvalidArgumentError(
      path,
      `expected the name of one of the tools given (${listed(tools)}), got ${JSON.stringify(name)}`,
    );
}

/**
 * A list of names of the tools given (`tools`) or a predicate (`idempotent`, `streaming`):
 * undefined when not given.
 */
export function checkedToolNames(
  value: unknown,
  path: string,
  tools: readonly string[],
): readonly string[] | ((name: string) => boolean) | undefined {
  if (value === undefined || typeof value === "function")
    return value as ((name: string) => boolean) | undefined;
  if (!Array.isArray(value))
    throw new InvalidArgumentError(
      path,
      `expected a list of tool names or a function (name) => boolean, got ${describe(value)}`,
    );
  value.forEach((name: unknown, index) => {
    if (typeof name !== "string")
      throw new InvalidArgumentError(
        childPath(path, index),
        `expected a tool name, got ${describe(name)}`,
      );
    checkedToolName(name, childPath(path, index), tools);
  });
  return value as readonly string[];
}

/** `effects`: a record of the name of a tool given (`tools`) to its effect kind. */
export function checkedEffects(
  value: unknown,
  path: string,
  tools: readonly string[],
): Record<string, ToolEffect["kind"]> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value))
    throw new InvalidArgumentError(
      path,
      `expected { [toolName]: ${TOOL_EFFECT_KINDS.map((kind) => `"${kind}"`).join(" | ")} }, got ${describe(value)}`,
    );
  for (const [name, kind] of Object.entries(value)) {
    checkedToolName(name, childPath(path, name), tools);
    if (!TOOL_EFFECT_KINDS.includes(kind as ToolEffect["kind"]))
      throw new InvalidArgumentError(
        childPath(path, name),
        `an effect kind is one of ${TOOL_EFFECT_KINDS.join(", ")}, got ${describe(kind)}`,
      );
  }
  return value as Record<string, ToolEffect["kind"]>;
}

/** An optional callback or flag. */
export function checkedOptional(value: unknown, path: string, type: "function" | "boolean"): void {
  if (value !== undefined && typeof value !== type)
    throw new InvalidArgumentError(path, `expected a ${type}, got ${describe(value)}`);
}
