import {
  childPath,
  InvalidArgumentError,
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

/** The options object of an adapter entry point, with its `recorder` checked. */
export function checkedOptions<T extends { recorder: SessionRecorder }>(options: unknown): T {
  if (!isObject(options))
    throw new InvalidArgumentError("$", `expected options { recorder }, got ${describe(options)}`);
  if (!looksLikeRecorder(options.recorder)) {
    const hint = looksLikeRecorder(options)
      ? ": pass the recorder as { recorder }"
      : `, got ${describe(options.recorder)}`;
    throw new InvalidArgumentError("$.recorder", `expected a SessionRecorder${hint}`);
  }
  return options as T;
}

/** A list of tool names or a predicate (`idempotent`, `streaming`): undefined when not given. */
export function checkedToolNames(
  value: unknown,
  path: string,
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
  });
  return value as readonly string[];
}

/** `effects`: a record of tool name to effect kind. */
export function checkedEffects(
  value: unknown,
  path: string,
): Record<string, ToolEffect["kind"]> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value))
    throw new InvalidArgumentError(
      path,
      `expected { [toolName]: ${TOOL_EFFECT_KINDS.map((kind) => `"${kind}"`).join(" | ")} }, got ${describe(value)}`,
    );
  for (const [name, kind] of Object.entries(value))
    if (!TOOL_EFFECT_KINDS.includes(kind as ToolEffect["kind"]))
      throw new InvalidArgumentError(
        childPath(path, name),
        `an effect kind is one of ${TOOL_EFFECT_KINDS.join(", ")}, got ${describe(kind)}`,
      );
  return value as Record<string, ToolEffect["kind"]>;
}

/** An optional callback or flag. */
export function checkedOptional(value: unknown, path: string, type: "function" | "boolean"): void {
  if (value !== undefined && typeof value !== type)
    throw new InvalidArgumentError(path, `expected a ${type}, got ${describe(value)}`);
}
