import {
  assertId,
  assertKnownKeys,
  childPath,
  InvalidArgumentError,
  InvalidEventError,
  type KnownKeys,
  validateRedaction,
} from "@agent-ledger/core";
import { protocol, RunState } from "@openai/agents";
import {
  assertAgent,
  assertArgument,
  assertMcpToolEffectOption,
  assertObject,
  assertOptional,
  describe,
  hasMethods,
  isRunState,
} from "./argument-checks.js";
import type {
  LedgerRunOptions,
  ResumeRunOptions,
  RunWithLedgerOptions,
} from "./ledger-run-options.js";

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
  // Asked for often enough to get its own words: a resume replays from the ledger, then runs on.
  if (resume && given.stream !== undefined)
    throw new InvalidArgumentError(
      "$.stream",
      "resumeRun does not stream: it resolves with the run's result once the resumed run stops (completed, interrupted at an approval, or cancelled); leave stream out and read the result (finalOutput, interruptions)",
    );
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
