import {
  type Attempt,
  InvalidArgumentError,
  type KnownKeys,
  type SessionRecorder,
  type ToolEffect,
  type UnresolvedAttemptError,
} from "@agent-ledger/core";

// `wrapTools`' options, and how its wrapper reads them for each tool.

/** A tool call that was in flight when the process died and is not declared idempotent. */
export interface UnresolvedToolCall {
  name: string;
  toolCallId: string;
  input: unknown;
  /** The recorded attempt: it may or may not have had its effect. */
  attempt: Attempt;
  error: UnresolvedAttemptError;
}

/** What a person (or policy) decided about an unresolved tool call. */
export type UnresolvedDecision = { action: "retry" } | { action: "abandon"; reason: string };

export interface WrapToolsOptions {
  recorder: SessionRecorder;
  /** Tools safe to run again after a crash (by name, or a predicate). */
  idempotent?: readonly string[] | ((name: string) => boolean);
  /** The effect kind of each tool (`none`, `read`, `write`, `unknown`; default unknown). */
  effects?: Record<string, ToolEffect["kind"]>;
  /**
   * Tools whose `execute` returns an AsyncIterable (preliminary results, the last one the
   * result) without being an `async function*`, e.g. `({ q }) => progress(q)` (by name, or a
   * predicate). The SDK streams whatever `execute` returns synchronously; the wrapper must
   * answer before it calls `execute`, which it does only once the request is committed, so it
   * cannot look first. An `async function*` needs no declaring.
   */
  streaming?: readonly string[] | ((name: string) => boolean);
  /**
   * Asked when a resumed run meets a tool call that was in flight at the crash and is not
   * idempotent. Without it the run stops with `unresolved-attempt`. `retry` runs the tool again
   * (recorded with retryOf); `abandon` records the decision and tells the model the call failed.
   */
  onUnresolved?: (call: UnresolvedToolCall) => Promise<UnresolvedDecision> | UnresolvedDecision;
}

/** What `wrapTools` refuses any other option key against. */
export const WRAP_TOOLS_OPTIONS: KnownKeys<WrapToolsOptions> = {
  recorder: true,
  idempotent: true,
  effects: true,
  streaming: true,
  onUnresolved: true,
};

/**
 * A tool's options as its wrapper records its calls: `wrapTools`' options, and `extension` for
 * a provider-defined tool (`type: "provider"`, its schema the provider's: Anthropic's bash or
 * computer use...), noted in each request's metadata (`toolType`), which the OpenTelemetry
 * export gives as `gen_ai.tool.type` (an app's own tool is a `function`).
 */
export type ToolOptions = WrapToolsOptions & { toolType?: "extension" };

/** True for a tool `names` (a list, or a predicate) names. */
export function named(names: WrapToolsOptions["idempotent"], name: string): boolean {
  if (typeof names === "function") return names(name);
  return names?.includes(name) ?? false;
}

/**
 * The effect `options` declare for the calls of tool `name` (`unknown`, not idempotent, unless
 * declared), as its requests record it.
 */
export function effectOf(options: ToolOptions, name: string): ToolEffect {
  return {
    // Own keys only: a tool named "toString" has no effect declared by Object.prototype.
    kind:
      (options.effects && Object.hasOwn(options.effects, name)
        ? options.effects[name]
        : undefined) ?? "unknown",
    idempotent: named(options.idempotent, name),
  };
}

/** onUnresolved's answer, checked when it is read: anything else would be taken as one of them. */
export function checkedDecision(decision: unknown): UnresolvedDecision {
  const answer = decision as { action?: unknown; reason?: unknown } | null | undefined;
  if (answer?.action === "retry") return { action: "retry" };
  if (answer?.action === "abandon" && typeof answer.reason === "string" && answer.reason !== "")
    return { action: "abandon", reason: answer.reason };
  let given: string;
  try {
    given = JSON.stringify(decision) ?? String(decision);
  } catch {
    given = String(decision);
  }
  throw new InvalidArgumentError(
    "$.onUnresolved",
    `onUnresolved answered ${given}: expected { action: "retry" } or { action: "abandon", reason } with a non-empty reason`,
  );
}
