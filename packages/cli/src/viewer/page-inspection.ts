import {
  type AttemptView,
  type EventStore,
  type LedgerEvent,
  type RunView,
  redactUrl,
  runsInTreeOrder,
  type SeqGap,
  type SessionInspection,
} from "@agent-ledger/core";
import { interruptText } from "../interrupt-outcome.js";
import { approvalLine, approvalText, madeAgainText, resolveHint } from "../made-again-text.js";
import { inspectForDecision, type NextStep, withNextSteps } from "../next-steps.js";
import { type OpenRun, openRunsHeading } from "../open-runs.js";
import { type PausedRun, pausedHeading, waitingWithPause } from "../paused-runs.js";
import { notIntactParts, notIntactText } from "../render-inspection.js";
import { settledWithOuterParts } from "../settled-with-outer.js";
import { withReadSession } from "../store.js";
import { nothingRecordedText, unrecordedInsideText } from "../unrecorded-agent-calls.js";

/** An event as the page names it when it is the cause of another (`caused by tool.requested x`). */
export interface EventBrief {
  type: string;
  /** Its payload's `name`, when a string. */
  name?: string;
  commitCursor: number;
  runId: string;
  seq: number;
}

/**
 * A run whose seqs have a gap (`RunView.seqGap`: rows deleted by hand, or lost), with what
 * `inspect` says of it (`text`, render-inspection.ts's notIntactText) and its parts the page
 * shows apart, each value in an element of its own: `what` is missing, the `verify` command.
 * `passwordLeftOut`: the command shows the store URL's password as `***`, as a resolve
 * command does (next-steps.ts). The page's: not-intact.ts's `NotIntactRun` is the warning alone,
 * as the commands print it.
 */
export interface PageNotIntactRun {
  runId: string;
  seqGap: SeqGap;
  text: string;
  what: string;
  command: string;
  passwordLeftOut?: true;
}

/** What the page says of `run` when its seqs have a gap (as `inspect`, with its parts); undefined when intact. */
function pageNotIntactOf(
  run: RunView,
  sessionId: string,
  options: { storeUrl?: string },
): PageNotIntactRun | undefined {
  const parts = notIntactParts(run, sessionId, options);
  const text = notIntactText(run, sessionId, options);
  if (parts === undefined || text === undefined || run.seqGap === undefined) return undefined;
  const passwordLeftOut =
    options.storeUrl !== undefined && redactUrl(options.storeUrl) !== options.storeUrl;
  return {
    runId: run.runId,
    seqGap: run.seqGap,
    text,
    ...parts,
    ...(passwordLeftOut ? { passwordLeftOut: true as const } : {}),
  };
}

/** An attempt in the page's run tree: what a row shows and what a click on it fetches. */
export type TreeAttempt = Omit<AttemptView, "request" | "effect"> & {
  /** The commit cursor of its request event (the page fetches that event when it is clicked). */
  requestCursor?: number;
  /** The cause of its request event, when it has one. */
  causedByEventId?: string;
  /** Approved for a re-run (`resolve --approve`): what `inspect`'s tree says of it. */
  approval?: string;
  /**
   * An agent call that completed with no child run: what `inspect` warns under it
   * (unrecorded-agent-calls.ts's nothingRecordedText).
   */
  nothingRecorded?: string;
  /**
   * A LangGraph tool that paused at `interrupt()`, recorded as failed (interrupt-outcome.ts):
   * what `inspect` says of it instead of "failed" (`paused at interrupt(<question>) ...`). Its
   * raw outcome (the interrupts as JSON, a stack) is then left out.
   */
  pausedAt?: string;
};

/**
 * An unresolved attempt as the page lists it, with what `inspect` says under it
 * (made-again-text.ts): `approval`, the approval line of a call approved for a re-run,
 * `madeAgain`, why there is nothing to decide when its next step is `none`, and `decide`, the
 * line under the `resolve` command of a call a person decides (what the reason does, and
 * `--approve`), and `settled`, what it says of a call settled with the tool call it was made in.
 */
export type PageUnresolved = AttemptView & {
  approval?: string;
  madeAgain?: string;
  decide?: string;
  /**
   * Its next step is `settled-with-outer`: what `inspect` says of it, in its parts
   * (settled-with-outer.ts's settledWithOuterParts), the command apart, to copy.
   */
  settled?: { before: string; command?: string; after: string };
};

/**
 * `unrecorded`: what `inspect` warns first under the child run of an agent call when the run
 * does not say it records every call (unrecorded-agent-calls.ts's unrecordedInsideText).
 * `pausedWith`: the paused run it waits with (paused-runs.ts's waitingWithPause), the paused
 * run itself included: the page shows it paused, as `inspect` does.
 */
export type TreeRun = Omit<RunView, "steps" | "children"> & {
  unrecorded?: string;
  pausedWith?: string;
  steps: { stepId: string; kind: "model" | "tool"; attempts: TreeAttempt[] }[];
  children: TreeRun[];
};

/**
 * The session as the viewer's page draws it: the inspection `inspect --json` gives, with the
 * next steps and pauses (`withNextSteps`), but a run tree of what its rows show, since each row
 * of a long session is sent on every change (100k events: 47 MB with every request and result):
 * the requests of the unresolved attempts stay, in `unresolved`, as the boxes a person decides
 * from show them; a completed call's outcome and a completed run's result are left out.
 */
export type PageInspection = Omit<SessionInspection, "runs" | "unresolved"> & {
  runs: TreeRun[];
  unresolved: PageUnresolved[];
  nextSteps: NextStep[];
  paused?: PausedRun[];
  /** What the paused runs are headed with, when a run is (paused-runs.ts's pausedHeading). */
  pausedHeading?: string;
  /** The runs open with nothing in flight (open-runs.ts), when there are, and their heading. */
  openRuns?: OpenRun[];
  openRunsHeading?: string;
  /** The commit cursor of its last event: `/api/session?after=` says whether any came since. */
  lastCursor: number;
  /** `recordedAt` of the first and last events: the timeline. */
  firstAt?: string;
  lastAt?: string;
  /** The events runs and requests name as their cause, by eventId. */
  causes: Record<string, EventBrief>;
  /**
   * The runs whose seqs have a gap, in tree order (as `inspect --json` lists them): what is
   * shown of them is not what was recorded. Absent when every run is intact.
   */
  notIntact?: PageNotIntactRun[];
};

function briefOf(event: LedgerEvent): EventBrief {
  const payload = event.payload;
  const name =
    typeof payload === "object" && payload !== null && !Array.isArray(payload)
      ? payload.name
      : undefined;
  return {
    type: event.type,
    ...(typeof name === "string" ? { name } : {}),
    commitCursor: event.commitCursor,
    runId: event.runId,
    seq: event.seq,
  };
}

/**
 * `inspectForDecision` as the page shows it (PageInspection). What the page says of causes is
 * noted in the same pass over the events (the store wrapped, each page of events seen as the
 * inspection reads it): the page holds a window of the events, not all of them.
 */
export async function inspectForPage(
  store: EventStore,
  sessionId: string,
  options: { storeUrl?: string } = {},
): Promise<PageInspection> {
  const briefs = new Map<string, EventBrief>();
  // The cause of each event that names one: a run's start or a call's request (by eventId).
  const causeOf = new Map<string, string>();
  let first: LedgerEvent | undefined;
  let last: LedgerEvent | undefined;
  const seen = (events: readonly LedgerEvent[]) => {
    for (const event of events) {
      first ??= event;
      last = event;
      briefs.set(event.eventId, briefOf(event));
      if (event.causedByEventId !== undefined) causeOf.set(event.eventId, event.causedByEventId);
    }
  };
  const observed = withReadSession(store, async (request, readSession) => {
    const page = await readSession(request);
    seen(page.events);
    return page;
  });
  const inspection = withNextSteps(
    await inspectForDecision(observed, sessionId),
    options.storeUrl === undefined ? {} : { storeUrl: options.storeUrl },
  );
  const causes: Record<string, EventBrief> = {};
  const named = (eventId: string | undefined) => {
    const brief = eventId === undefined ? undefined : briefs.get(eventId);
    if (eventId !== undefined && brief !== undefined) causes[eventId] = brief;
  };
  const notIntact: PageNotIntactRun[] = [];
  // Each run's row, in tree order (a parent's row is made first, and each child's row is put in
  // it): what the page says of causes and gaps comes in the order of the rows.
  const runs: TreeRun[] = [];
  const rows = new Map<RunView, TreeRun>();
  // Each attempt by its request event: the call of its parent run that caused a child run, met
  // before the child in tree order.
  const requests = new Map<string, AttemptView>();
  const pausedWith = waitingWithPause(inspection.runs);
  for (const { run, parent } of runsInTreeOrder(inspection.runs)) {
    named(run.causedByEventId);
    const gap = pageNotIntactOf(run, inspection.sessionId, options);
    if (gap !== undefined) notIntact.push(gap);
    // As render-inspection.ts places a child run: under the call of its parent that caused it.
    const cause = run.causedByEventId === undefined ? undefined : requests.get(run.causedByEventId);
    const calledBy = cause !== undefined && cause.runId === parent?.runId ? cause : undefined;
    const unrecorded = unrecordedInsideText(run, calledBy);
    const childCauses = new Set(run.children.map((child) => child.causedByEventId));
    for (const step of run.steps)
      for (const attempt of step.attempts) requests.set(attempt.requestEventId, attempt);
    // `seqGap` stays in `rest`: the tree marks the run.
    const { steps, children, result, ...rest } = run;
    const paused = pausedWith.get(run.runId);
    const row: TreeRun = {
      ...rest,
      ...(result !== undefined && run.status !== "completed" ? { result } : {}),
      ...(unrecorded === undefined ? {} : { unrecorded }),
      ...(paused === undefined ? {} : { pausedWith: paused }),
      steps: steps.map((step) => {
        const stepHasChild = step.attempts.some((attempt) =>
          childCauses.has(attempt.requestEventId),
        );
        return {
          stepId: step.stepId,
          kind: step.kind,
          attempts: step.attempts.map((attempt) => {
            const { request, effect, outcome, ...shown } = attempt;
            const causedByEventId = causeOf.get(attempt.requestEventId);
            named(causedByEventId);
            const requestCursor = briefs.get(attempt.requestEventId)?.commitCursor;
            const nothing = nothingRecordedText(attempt, stepHasChild);
            const pausedAt = attempt.status === "failed" ? interruptText(outcome) : undefined;
            const failure = outcome !== undefined && attempt.status !== "completed";
            return {
              ...shown,
              ...(pausedAt !== undefined ? { pausedAt } : failure ? { outcome } : {}),
              ...(requestCursor === undefined ? {} : { requestCursor }),
              ...(causedByEventId === undefined ? {} : { causedByEventId }),
              ...(attempt.approvedAt === undefined ? {} : { approval: approvalText(attempt) }),
              ...(nothing === undefined ? {} : { nothingRecorded: nothing }),
            };
          }),
        };
      }),
      children: [],
    };
    rows.set(run, row);
    if (parent === undefined) runs.push(row);
    else rows.get(parent)?.children.push(row);
  }
  const unresolved = inspection.unresolved.map((attempt, index): PageUnresolved => {
    const step = inspection.nextSteps[index];
    return {
      ...attempt,
      ...(attempt.approvedAt === undefined ? {} : { approval: approvalLine(attempt) }),
      ...(step?.action === "none" ? { madeAgain: madeAgainText(attempt) } : {}),
      ...(step?.action === "resolve" ? { decide: resolveHint(attempt) } : {}),
      ...(step?.action === "settled-with-outer" ? { settled: settledWithOuterParts(step) } : {}),
    };
  });
  return {
    ...inspection,
    ...(inspection.paused === undefined ? {} : { pausedHeading: pausedHeading(inspection.paused) }),
    ...(inspection.openRuns === undefined
      ? {}
      : { openRunsHeading: openRunsHeading(inspection.openRuns) }),
    runs,
    unresolved,
    ...(notIntact.length > 0 ? { notIntact } : {}),
    lastCursor: last?.commitCursor ?? 0,
    ...(first === undefined ? {} : { firstAt: first.recordedAt }),
    ...(last === undefined ? {} : { lastAt: last.recordedAt }),
    causes,
  };
}

/**
 * True when session `sessionId` has no event after `cursor` and still has the event at it: an
 * inspection made at `cursor` is the latest (one read of at most two events).
 */
export async function unchangedSince(
  store: EventStore,
  sessionId: string,
  cursor: number,
): Promise<boolean> {
  if (cursor < 1) return false;
  const page = await store.readSession({ sessionId, after: cursor - 1, limit: 2 });
  return page.events.length === 1 && page.events[0]?.commitCursor === cursor;
}
