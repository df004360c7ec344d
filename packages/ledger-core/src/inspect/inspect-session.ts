import {
  BlobCache,
  checkBlobs,
  markedEvents,
  resolveEvents,
  resolvePayload,
} from "../compact/resolve.js";
import { assertOneOf, assertOptions, type KnownKeys } from "../events/argument-checks.js";
import type { JsonValue } from "../events/json.js";
import type { EventStore } from "../store/event-store.js";
import { assertEventStore } from "../store/validate.js";
import { resolvePauses } from "./awaiting-decision.js";
import type { RunView, SessionInspection } from "./inspection-views.js";
import { recordedRunLengths, seqGapOf } from "./seq-gaps.js";
import { SessionInspector } from "./session-inspector.js";

// Where the package entry, the decisions and the tests have always found them.
export type {
  AttemptStatus,
  AttemptView,
  RunView,
  SessionInspection,
  StepView,
} from "./inspection-views.js";
export { inspectEvents, SessionInspector } from "./session-inspector.js";

/**
 * What happened in a session (§7): runs as a tree with statuses, steps and attempts, and
 * every unresolved attempt — calls that went out and never came back. One pass over the
 * session's events in commit order, page by page, so envelopes can be collected as it goes.
 */
export async function inspectSession(
  store: EventStore,
  sessionId: string,
  options: InspectOptions = {},
): Promise<SessionInspection> {
  assertEventStore(store);
  // `{ resolv: false }` read every blob of a long session it was told not to.
  assertOptions(options, INSPECT_OPTIONS, "inspectSession", { keysAt: "$" });
  assertOneOf(options.resolve, "$.resolve", [true, false, "in-flight"]);
  assertOneOf(options.missingBlobs, "$.missingBlobs", ["throw", "keep"]);
  const inspector = new SessionInspector(sessionId);
  const cache = new BlobCache();
  const resolveOptions = {
    cache,
    ...(options.missingBlobs ? { missingBlobs: options.missingBlobs } : {}),
  };
  const mode = options.resolve ?? true;
  // In-flight mode: the blobs the full mode would read, checked at the end (none may be lost
  // unsaid, and none more is read).
  const named = new Set<string>();
  // Read before the events, so a run written meanwhile reads longer than recorded here, never
  // shorter: shorter means its last events are gone (see `RunView.seqGap`).
  const recorded = await recordedRunLengths(store, sessionId);
  let after = 0;
  for (;;) {
    const page = await store.readSession({ sessionId, after, limit: PAGE_SIZE });
    const events =
      mode === true
        ? await resolveEvents(store, page.events, resolveOptions)
        : await resolvePauses(store, page.events, resolveOptions);
    for (const event of events) inspector.add(event);
    if (mode === "in-flight") for (const ref of markedEvents(page.events).refs) named.add(ref);
    if (page.events.length < PAGE_SIZE) break;
    after = page.nextCursor;
  }
  const inspection = inspector.result();
  markMissingTails(inspection.runs, recorded);
  if (mode === "in-flight") {
    await checkBlobs(store, named, resolveOptions);
    await resolveInFlight(inspection, (value) => resolvePayload(store, value, resolveOptions));
  }
  if (cache.missing.size > 0) inspection.missingBlobs = [...cache.missing].sort();
  return inspection;
}

/**
 * Marks each run (of the tree) the store records as longer than its events read: its last
 * events were deleted, a closed run's end among them (a completed payment would read as in
 * flight). A gap found earlier in the run stays the one reported.
 */
function markMissingTails(runs: RunView[], lengths: Map<string, number>): void {
  const stack = [...runs];
  for (let run = stack.pop(); run !== undefined; run = stack.pop()) {
    // One push per child: spread, 160,000 child runs overflowed the stack.
    for (const child of run.children) stack.push(child);
    const seqGap = seqGapOf(run, lengths.get(run.runId));
    if (seqGap !== undefined) run.seqGap = seqGap;
  }
}

/**
 * Resolves, in place, the requests of the unresolved attempts, every outcome and every run's
 * result: all but the requests of attempts that got an outcome (see `InspectOptions.resolve`).
 */
async function resolveInFlight(
  inspection: SessionInspection,
  resolve: (value: JsonValue) => Promise<JsonValue>,
): Promise<void> {
  for (const attempt of inspection.unresolved) attempt.request = await resolve(attempt.request);
  const runs = [...inspection.runs];
  for (let run = runs.pop(); run !== undefined; run = runs.pop()) {
    if (run.result !== undefined) run.result = await resolve(run.result);
    // A paused run's calls are resolved as read (`resolvePauses`): not resolved a second time.
    for (const step of run.steps)
      for (const attempt of step.attempts)
        if (attempt.outcome !== undefined) attempt.outcome = await resolve(attempt.outcome);
    for (const child of run.children) runs.push(child);
  }
}

const PAGE_SIZE = 5000;

const INSPECT_OPTIONS: KnownKeys<InspectOptions> = { resolve: true, missingBlobs: true };

export interface InspectOptions {
  /**
   * Resolve blob references (§8) in requests and outcomes (default true). `false` shows them
   * as stored: `{ "$ledger": "text" | "json" | "list", "ref": "sha256:..." }` markers.
   * `"in-flight"` resolves what a person deciding about the session reads: the requests of
   * unresolved attempts, every outcome and run result; the requests of attempts that got an
   * outcome stay as stored. Every model request re-sends the conversation, so with them all
   * resolved the inspection's JSON grows with the square of its length (300 turns of 2 KB
   * messages: 100 MB; 1,000 turns: past the longest string V8 makes). Every blob an event
   * names is still checked (`missingBlobs`). A paused run's calls (`awaitingDecision`) are
   * resolved in every mode: stored as blobs, as stored they would name no call.
   */
  resolve?: boolean | "in-flight";
  /**
   * A blob an event names that is not in the store: `"throw"` (default, `not-found`) or
   * `"keep"` its marker as stored and list its ref in `missingBlobs`, so what was in flight
   * can still be read after a blob was lost.
   */
  missingBlobs?: "throw" | "keep";
}
