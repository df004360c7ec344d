import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { uuidv7 } from "../events/ids.js";
import type { Actor, LedgerEvent } from "../events/types.js";
import type { RunSummary } from "../store/event-store.js";
import type { Attempt } from "./attempt.js";
import type { SessionRecorderOptions } from "./recorder-options.js";
import type { RecorderState } from "./recorder-state.js";
import type { Redaction } from "./redact.js";

/** What `SessionRecorder.child` takes. */
export interface ChildOptions {
  runId?: string;
  actor: Actor;
  causedByEventId?: string;
  redact?: Redaction;
}

// Its options, checked against the interface by the compiler (see recorder-options.ts).
const CHILD_OPTIONS: KnownKeys<ChildOptions> = {
  actor: true,
  runId: true,
  causedByEventId: true,
  redact: true,
};

/** Recorded child runs of one actor, in start order: `next` is the first not adopted yet. */
interface AdoptableRuns {
  runIds: string[];
  next: number;
}

/**
 * The child runs recorded under a run, as `child()` adopts them on resume, by actor id. One
 * started with a cause (the tool call that ran a sub-agent, the model completion that handed
 * off) is adopted only by the child of that same cause, so a later call never takes over the
 * run, completed or not, of an earlier call of the same agent: `byCause`, keyed by the request
 * of the first attempt of a call when the cause is a request. The others are adopted in order.
 */
interface RecordedChildren {
  uncaused: Map<string | undefined, AdoptableRuns>;
  byCause: Map<string, Map<string | undefined, AdoptableRuns>>;
}

/** What one recorder knows of the child runs of its run, to adopt them on resume. */
export class ChildRuns {
  /**
   * Child runs recorded before a crash, adopted by `child()` on resume (see `RecordedChildren`).
   * Looked up, not searched: a scan of the list (and a splice out of it) per `child()` made
   * resuming a run with thousands of sub-agents quadratic.
   */
  recorded: RecordedChildren | undefined;
  /**
   * The session's runs by parent, as listed when the resumed run at the top of this tree was
   * loaded. Its children, loaded in turn, find their own recorded children here: each listing
   * the whole session again made resuming a run with N sub-agents read N x N runs.
   */
  runsByParent: Map<string, RunSummary[]> | undefined;
  /**
   * The request event of the first attempt of a tool call, by the request event of each of its
   * retries (only retries are here): a child run a call started (a sub-agent run by a tool) is
   * the call's, whichever of its attempts names it as its cause (see `firstRequestOf`).
   */
  readonly #retriedRequests = new Map<string, string>();

  /** The request event of the first attempt of the call whose (retry's) request is `eventId`. */
  firstRequestOf(eventId: string): string {
    return this.#retriedRequests.get(eventId) ?? eventId;
  }

  /** Notes the tool retries among a run's recorded events (read on resume). */
  readRetries(events: readonly LedgerEvent[]): void {
    // The first request of each tool call, by attempt, while reading: only retries are kept.
    const firstRequests = new Map<string, string>();
    for (const event of events) {
      if (event.type !== "tool.requested" || event.attemptId === undefined) continue;
      const first = event.retryOf === undefined ? undefined : firstRequests.get(event.retryOf);
      firstRequests.set(event.attemptId, first ?? event.eventId);
      if (first !== undefined) this.#retriedRequests.set(event.eventId, first);
    }
  }

  // Notes that `retry` (committed live) retries the tool attempt whose request is
  // `retriedEventId` (a caller's attempt may lack it: then there is nothing to note).
  noteRetry(retry: Attempt, retriedEventId: string | undefined): Attempt {
    if (retry.kind === "tool" && typeof retriedEventId === "string")
      this.#retriedRequests.set(retry.requestedEventId, this.firstRequestOf(retriedEventId));
    return retry;
  }

  /** The recorded run a new child of `actorId` (with `cause`, if any) adopts, if there is one. */
  adopt(actorId: string | undefined, cause: string | undefined): string | undefined {
    const byActor =
      cause === undefined
        ? this.recorded?.uncaused
        : this.recorded?.byCause.get(this.firstRequestOf(cause));
    const recorded = byActor?.get(actorId);
    if (recorded !== undefined && recorded.next < recorded.runIds.length)
      return recorded.runIds[recorded.next++];
    return undefined;
  }
}

/**
 * The options of a child recorder of `parent` (see `SessionRecorder.child`): on a resumed run,
 * the run id of the child run it adopts unless the caller gave one.
 */
export function childOptions(parent: RecorderState, options: ChildOptions): SessionRecorderOptions {
  assertOptions(options, CHILD_OPTIONS, "child", {
    at: "$",
    needs: "child needs { actor } (and optionally runId, causedByEventId, redact)",
  });
  let runId = options.runId;
  if (runId === undefined && parent.children.recorded)
    // Optional: a missing actor is refused by the constructor, with its path.
    runId = parent.children.adopt(
      (options.actor as Actor | undefined)?.id,
      options.causedByEventId,
    );
  const redact = options.redact ?? parent.redact;
  return {
    store: parent.store,
    sessionId: parent.sessionId,
    runId: runId ?? uuidv7(),
    actor: options.actor,
    parentRunId: parent.runId,
    ...(options.causedByEventId !== undefined ? { causedByEventId: options.causedByEventId } : {}),
    ...(redact !== undefined ? { redact } : {}),
    ...(parent.metadata ? { metadata: parent.metadata } : {}),
    ...(parent.compactOption !== undefined ? { compact: parent.compactOption } : {}),
  };
}

/** Loads the child runs recorded under `state`'s run, so its `child()` can adopt them. */
export async function loadRecordedChildren(state: RecorderState): Promise<void> {
  const { store, sessionId, children } = state;
  let byParent = state.parent?.children.runsByParent;
  if (byParent === undefined) {
    byParent = new Map();
    for (const run of await store.listRuns(sessionId)) {
      if (run.parentRunId === undefined) continue;
      const siblings = byParent.get(run.parentRunId);
      if (siblings === undefined) byParent.set(run.parentRunId, [run]);
      else siblings.push(run);
    }
  }
  children.runsByParent = byParent;
  const firsts: LedgerEvent[] = [];
  for (const run of byParent.get(state.runId) ?? []) {
    const page = await store.readRun({ sessionId, runId: run.runId, limit: 1 });
    if (page.events[0]) firsts.push(page.events[0]);
  }
  firsts.sort((a, b) => a.commitCursor - b.commitCursor);
  const recorded: RecordedChildren = { uncaused: new Map(), byCause: new Map() };
  for (const event of firsts) {
    let byActor = recorded.uncaused;
    if (event.causedByEventId !== undefined) {
      const cause = children.firstRequestOf(event.causedByEventId);
      byActor = recorded.byCause.get(cause) ?? new Map();
      recorded.byCause.set(cause, byActor);
    }
    const actorId = event.actor?.id;
    const own = byActor.get(actorId);
    if (own === undefined) byActor.set(actorId, { runIds: [event.runId], next: 0 });
    else own.runIds.push(event.runId);
  }
  children.recorded = recorded;
}

/** Makes `child`, the state of a recorder made with `childOptions`, that of a child of `parent`. */
export function attachChild(child: RecorderState, parent: RecorderState): void {
  child.parent = parent;
  // A child reads its run as its parent was read: as stored under `resolve: false`.
  child.resolveOnLoad = parent.resolveOnLoad;
}

/** The runs recorded with `own`'s run as their parent (see `SessionRecorder.recordedChildRuns`). */
export function recordedChildRuns(own: RecorderState): readonly RunSummary[] {
  // The listing is the session's, made once for a resumed tree: a child adopted in it finds
  // it on an ancestor.
  for (let state: RecorderState | undefined = own; state; state = state.parent) {
    const byParent = state.children.runsByParent;
    if (byParent !== undefined) return byParent.get(own.runId) ?? [];
  }
  return [];
}
