export type {
  BlobMarker,
  CompactedEvent,
  CompactOptions,
  EvidenceView,
  ListNode,
  MarkerKind,
  ResolveOptions,
} from "./compact/index.js";
export {
  asEscape,
  asMarker,
  BlobCache,
  CompactSession,
  DEFAULT_TEXT_THRESHOLD_BYTES,
  DEFAULT_THRESHOLD_BYTES,
  lastListOf,
  latestEvidence,
  latestEvidenceOf,
  MARKER_KEY,
  MESSAGE_LIST_FIELDS,
  marker,
  PayloadCompactor,
  putCompactedBlobs,
  resolveEvents,
  resolvePayload,
} from "./compact/index.js";
export type {
  ChildRunAddress,
  SettleCallsInsideOptions,
  SettledRun,
  ToolCallRef,
} from "./decisions/calls-inside.js";
export { settleCallsInside } from "./decisions/calls-inside.js";
export { lastToolAttempts } from "./decisions/runs-by-call.js";
export type { ToolCallEnd } from "./decisions/tool-call-end.js";
export { closeAsCallEnded, endOfRecorded, toolCallLabel } from "./decisions/tool-call-end.js";
export { assertKnownKeys, type KnownKeys } from "./events/argument-checks.js";
export { canonicalJson, hashJson, sha256Hex } from "./events/canonical.js";
export { isCredentialKey } from "./events/credential-name.js";
export type { LedgerErrorCode, LedgerErrorOptions } from "./events/errors.js";
export {
  ConflictError,
  DuplicateEventError,
  findLedgerError,
  InvalidArgumentError,
  InvalidEventError,
  LedgerError,
  NonSerializableError,
  NotFoundError,
  ReplayDivergenceError,
  RunClosedError,
  StoreUnavailableError,
  TamperDetectedError,
  UnresolvedAttemptError,
} from "./events/errors.js";
export { computeEventHash } from "./events/hash-chain.js";
export { assertId, compareIds, isValidId, uuidv7 } from "./events/ids.js";
export type { JsonObject, JsonValue, SerializedError } from "./events/json.js";
export {
  assertPlainJson,
  childPath,
  cloneJson,
  hasLoneSurrogate,
  isJsonObject,
  MAX_JSON_DEPTH,
  normalizeError,
  toPlainJson,
  wellFormedText,
} from "./events/json.js";
export { type RebuiltError, rebuiltError } from "./events/rebuilt-error.js";
export type {
  Actor,
  CustomEventType,
  EventType,
  KnownEventType,
  LedgerEvent,
  NewEvent,
  RunHead,
  RunStatus,
  ToolEffect,
} from "./events/types.js";
export { EVENT_TYPES, SCHEMA_VERSION, statusOfType, TERMINAL_TYPES } from "./events/types.js";
export type { AwaitedCallView, AwaitingDecisionView } from "./inspect/awaiting-decision.js";
export { AWAITING_DECISION_FIELD } from "./inspect/awaiting-decision.js";
export type {
  AttemptStatus,
  AttemptView,
  InspectOptions,
  RunView,
  SessionInspection,
  StepView,
} from "./inspect/inspect-session.js";
export { inspectEvents, inspectSession, SessionInspector } from "./inspect/inspect-session.js";
export {
  EFFECT_IN_CHILD_RUNS_FIELD,
  HANDOFF_TO_FIELD,
  madeAgainByItself,
  RECORDS_EVERY_CALL_FIELD,
  REFUSAL_SAVED_TYPE,
} from "./inspect/made-again.js";
export { type RunInTree, runsInTreeOrder } from "./inspect/run-tree-order.js";
export { type RunSeqs, type SeqGap, SeqGaps } from "./inspect/seq-gaps.js";
export {
  type EndedOuterCall,
  endedOuterCalls,
  type OuterCallEnd,
} from "./inspect/settled-with-outer.js";
export type { VerifyResult, VerifyRunOptions } from "./inspect/verify-run.js";
export { assertRunIntact, unreadableRunResult, verifyRun } from "./inspect/verify-run.js";
export type {
  AtifContentPart,
  AtifImageMediaType,
  AtifMetrics,
  AtifObservationResult,
  AtifStep,
  AtifSubagentRef,
  AtifToolCall,
  AtifTrajectory,
} from "./projections/atif-types.js";
export type { ExtractedToolCall } from "./projections/extract.js";
export { isEmbeddingsRequest } from "./projections/extract.js";
export type { MessageHistoryOptions } from "./projections/message-history.js";
export { messageHistory } from "./projections/message-history.js";
export type { TokenUsage } from "./projections/model-usage.js";
export { LedgerIdGenerator } from "./projections/otel-ids.js";
export type { HistoryMessage } from "./projections/request-messages.js";
export { toAtif } from "./projections/to-atif.js";
export type {
  OtelProjection,
  OtelTracerProvider,
  ToOtelSpansOptions,
} from "./projections/to-otel-spans.js";
export { toOtelSpans } from "./projections/to-otel-spans.js";
export type { Attempt, ReplayedOutcome } from "./recorder/attempt.js";
export { CommitQueue } from "./recorder/commit-queue.js";
export { withoutCredentialKeys, withoutUrlCredentials } from "./recorder/credential-key.js";
export type { CloseGuard } from "./recorder/recorder-state.js";
export type { RedactContext, Redaction } from "./recorder/redact.js";
export {
  applyRedaction,
  DEFAULT_CREDENTIAL_PATHS,
  REDACTED,
  validateRedaction,
} from "./recorder/redact.js";
export { undecidedToolCall } from "./recorder/replayed-calls.js";
export type {
  AttemptRef,
  BeforeModelCallOptions,
  BeforeToolCallOptions,
  ChildOptions,
  DecisionOptions,
  EvidenceRecord,
  OtherRunOptions,
  ResumeOptions,
  SessionRecorderOptions,
} from "./recorder/session-recorder.js";
export { SessionRecorder } from "./recorder/session-recorder.js";
export type { RecordedAttempt, ReplayMatch, ToolAttemptKey } from "./replay/replay-cursor.js";
export { attemptFromRecorded, collectAttempts, ReplayCursor } from "./replay/replay-cursor.js";
export type { AppendPlan, AppendState, PlannedEvent } from "./store/append-plan.js";
export {
  assignCursors,
  buildEvent,
  EMPTY_HEAD,
  planAppend,
  planFork,
} from "./store/append-plan.js";
export type { EncodedBlob } from "./store/blob.js";
export {
  assertBlobRef,
  BLOB_DEFLATE,
  BLOB_RAW,
  blobBytes,
  blobRef,
  DEFAULT_BLOB_GRACE_MS,
  decodeBlob,
  encodeBlob,
  isBlobRef,
  prepareBlob,
} from "./store/blob.js";
export type {
  AppendRequest,
  AppendResult,
  BlobTally,
  CollectBlobsOptions,
  CollectBlobsResult,
  DeleteSessionOptions,
  DeleteSessionResult,
  EventPage,
  EventStore,
  ForkRequest,
  InitOptions,
  ListSessionsRequest,
  PutBlobOptions,
  ReadRunRequest,
  ReadSessionRequest,
  RunSummary,
  SessionPage,
  SessionSummary,
  StoreDescription,
} from "./store/event-store.js";
export { MemoryEventStore } from "./store/memory-store.js";
export type { OpenStoreOptions } from "./store/open-store.js";
export { openStore } from "./store/open-store.js";
export { readRecordedRun, readWholeRun, readWholeSession } from "./store/read-all.js";
export { redactUrl, redactUrlsIn } from "./store/redact-url.js";
export { shellQuote } from "./store/shell-quote.js";
export { stopBeforeNextPage } from "./store/stop-signal.js";
export { ledgerCommand } from "./store/store-command.js";
export type { ValidAppend, ValidEvent } from "./store/validate.js";
export {
  assertEventStore,
  TOOL_EFFECT_KINDS,
  validateAppend,
  validateFork,
  validateNewEvent,
  validatePaging,
} from "./store/validate.js";
export type { ShapeRefusal } from "./store/validate-actor-metadata.js";
export { validateActor, validateMetadata } from "./store/validate-actor-metadata.js";
export type { ServerRefusal } from "./stores/server-refusal.js";
export { serverRefusal } from "./stores/server-refusal.js";
