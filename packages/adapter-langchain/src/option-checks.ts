import {
  assertEventStore,
  assertId,
  assertKnownKeys,
  InvalidArgumentError,
  type KnownKeys,
  validateActor,
  validateMetadata,
  validateRedaction,
} from "@agent-ledger/core";
import type { LedgerCheckpointSaverOptions } from "./checkpoint-saver.js";
import type { LedgerCallbackHandlerOptions } from "./handler-recorder.js";
import type { LedgerMiddlewareOptions } from "./ledger-middleware.js";
import { isRecord } from "./plain-json.js";

// Checked where the options are given, not at the first call that uses them: a mistake in
// JavaScript (or a config file) would otherwise surface as a TypeError deep inside an invoke.

// A bad id is `invalid-event` (DESIGN §6), as the core recorder and the stores say, whatever
// the entry point: core's own check, with its message.
function checkId(value: unknown, path: string, required: boolean): void {
  if (value === undefined && !required) return;
  assertId(value, path);
}

/** The SessionRecorder methods the handler calls: an object without one fails mid-invoke. */
const RECORDER_METHODS = [
  "startRun",
  "beforeModelCall",
  "modelCompleted",
  "modelFailed",
  "beforeToolCall",
  "toolCompleted",
  "toolFailed",
  "record",
];

// Every option of each, so that a misspelt one (`runID`, `onUnresolve`, `sesionId`) is refused at
// its path instead of dropped, leaving a new run, "throw" or the default session in its place.
type RecorderForm = Extract<LedgerCallbackHandlerOptions, { recorder: unknown }>;
type StoreForm = Extract<LedgerCallbackHandlerOptions, { store: unknown }>;
const RECORDER_FORM: KnownKeys<RecorderForm> = { recorder: true, recordChains: true };
const STORE_FORM: KnownKeys<StoreForm> = {
  store: true,
  sessionId: true,
  runId: true,
  actor: true,
  redact: true,
  metadata: true,
  recordChains: true,
};
const SAVER_OPTIONS: KnownKeys<LedgerCheckpointSaverOptions> = {
  store: true,
  sessionId: true,
  serde: true,
  cachedThreads: true,
};
const MIDDLEWARE_OPTIONS: KnownKeys<LedgerMiddlewareOptions> = {
  handler: true,
  onUnresolved: true,
};

/**
 * `LedgerCallbackHandler`'s options: `{ recorder }`, or `{ store, sessionId, runId?, actor?,
 * redact?, metadata? }`. Returns them as the handler keeps them: the store form's `redact` and
 * `metadata` are the copies core's checks make, so what the caller changes in them later (a path
 * pushed onto the list after the first invoke) does not change what the recorders it opens
 * remove or store, as it would not for a recorder made at once.
 */
export function checkHandlerOptions(options: unknown): LedgerCallbackHandlerOptions {
  if (!isRecord(options))
    throw new InvalidArgumentError(
      "$",
      "LedgerCallbackHandler needs { recorder } or { store, sessionId }",
    );
  // Before what is missing: a misspelt `sesionId` is named as such, not as a missing sessionId.
  // The recorder form's run, session and redaction are the recorder's: a `runId` beside it is
  // refused, where it would be ignored.
  const recorderForm = "recorder" in options;
  assertKnownKeys(
    options,
    recorderForm ? RECORDER_FORM : STORE_FORM,
    `LedgerCallbackHandler (${recorderForm ? "{ recorder }" : "{ store, sessionId }"} form)`,
  );
  // Options without either: the store is what is missing (a recorder is the exception).
  if (!("recorder" in options || "store" in options))
    throw new InvalidArgumentError(
      "$.store",
      "LedgerCallbackHandler needs { store, sessionId } (openStore(url) makes the store) or { recorder }",
    );
  if (options.recordChains !== undefined && typeof options.recordChains !== "boolean")
    throw new InvalidArgumentError("$.recordChains", "must be a boolean");
  if ("recorder" in options) {
    const recorder = options.recorder;
    if (
      !isRecord(recorder) ||
      RECORDER_METHODS.some((name) => typeof recorder[name] !== "function")
    )
      throw new InvalidArgumentError("$.recorder", "must be a SessionRecorder");
    return options as LedgerCallbackHandlerOptions;
  }
  assertEventStore(options.store, "$.store");
  checkId(options.sessionId, "$.sessionId", true);
  checkId(options.runId, "$.runId", false);
  // As the core recorder checks it when the first call makes one: `invalid-argument` at the bad
  // field's path, `invalid-event` for its id (`$.actor.id`, also when missing), as DESIGN §6 says.
  if (options.actor !== undefined) validateActor(options.actor, "$.actor", "invalid-argument");
  // The recorder is made at the first call: a bad redaction found there would have let nothing
  // through yet, but the invoke would fail mid-graph, far from the mistake. Core's own checks
  // (both invalid-argument, as the recorder says), with its paths.
  const redact = validateRedaction(options.redact, "$.redact");
  const metadata =
    options.metadata === undefined
      ? undefined
      : validateMetadata(options.metadata, "$.metadata", "invalid-argument");
  return {
    ...options,
    ...(redact !== undefined ? { redact } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  } as LedgerCallbackHandlerOptions;
}

/** `LedgerCheckpointSaver`'s options: `{ store, sessionId?, serde?, cachedThreads? }`. */
export function checkSaverOptions(options: unknown): void {
  if (!isRecord(options))
    throw new InvalidArgumentError("$", "LedgerCheckpointSaver needs { store }");
  assertKnownKeys(options, SAVER_OPTIONS, "LedgerCheckpointSaver");
  assertEventStore(options.store, "$.store");
  checkId(options.sessionId, "$.sessionId", false);
  const { cachedThreads, serde } = options;
  if (cachedThreads !== undefined && !(typeof cachedThreads === "number" && cachedThreads >= 1))
    throw new InvalidArgumentError("$.cachedThreads", "must be a number of threads, at least 1");
  if (
    serde !== undefined &&
    !(
      isRecord(serde) &&
      typeof serde.dumpsTyped === "function" &&
      typeof serde.loadsTyped === "function"
    )
  )
    throw new InvalidArgumentError("$.serde", "must be a LangGraph SerializerProtocol");
}

/**
 * `ledgerMiddleware`'s options: `{ handler, onUnresolved? }`, the LedgerCallbackHandler the
 * agent runs with, and what an unresolved call does on resume.
 */
export function checkMiddlewareOptions(options: unknown): void {
  if (!isRecord(options)) throw new InvalidArgumentError("$", "ledgerMiddleware needs { handler }");
  assertKnownKeys(options, MIDDLEWARE_OPTIONS, "ledgerMiddleware");
  const handler = options.handler;
  if (!isRecord(handler) || typeof handler.getRecorder !== "function")
    throw new InvalidArgumentError(
      "$.handler",
      "must be the LedgerCallbackHandler the agent is invoked with (callbacks: [handler])",
    );
  const onUnresolved = options.onUnresolved;
  if (onUnresolved !== undefined && onUnresolved !== "throw" && onUnresolved !== "interrupt")
    throw new InvalidArgumentError("$.onUnresolved", 'must be "throw" (default) or "interrupt"');
}
