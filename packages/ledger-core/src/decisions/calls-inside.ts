import { assertObjectArgument } from "../events/argument-checks.js";
import { ConflictError, InvalidArgumentError, LedgerError } from "../events/errors.js";
import type { LedgerEvent, RunStatus } from "../events/types.js";
import { type AttemptView, inspectEvents } from "../inspect/inspect-session.js";
import type { SessionRecorder } from "../recorder/session-recorder.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { openRunsByCall, runsByCallOf } from "./runs-by-call.js";
import {
  abandonedInside,
  closeAsCallEnded,
  endOfRecorded,
  type ToolCallEnd,
  toolCallLabel,
} from "./tool-call-end.js";

/** A tool call as `before*` returns it, an `unresolved-attempt` error carries it, or inspection lists it. */
export type ToolCallRef = {
  attemptId: string;
  name?: string | undefined;
  toolCallId?: string | undefined;
} & ({ requestedEventId: string } | { requestEventId: string });

/** A child run, as `settleCallsInside` hands it to `leave`. */
export interface ChildRunAddress {
  store: EventStore;
  sessionId: string;
  runId: string;
}

export interface SettleCallsInsideOptions {
  /**
   * A recorder of the run the tool call is on, made by `SessionRecorder.resume` (or a child of
   * one): the call's child runs are found among those it lists (`recordedChildRuns`), and what is
   * written there is written as its actor, with its redaction.
   */
  recorder: SessionRecorder;
  /** The tool call, whose outcome is already recorded: it will not run again. */
  call: ToolCallRef;
  /** How it ended: its child runs close the same way. */
  ended: ToolCallEnd;
  /**
   * A child run to leave as it is, at any depth: one that something else in this process closes
   * once the calls in flight there answer.
   */
  leave?: (run: ChildRunAddress) => boolean;
}

/** What `settleCallsInside` did to one child run (at any depth). */
export interface SettledRun {
  runId: string;
  parentRunId: string;
  /** The calls it found in flight there and abandoned, as inspection listed them. */
  abandoned: AttemptView[];
  /** How it closed the run; undefined when another writer had closed it first. */
  closed: RunStatus | undefined;
}

/**
 * How many times one run is read again after another writer moved it on (`conflict`) or closed
 * it (`run-closed`) under this one: each time, the other writer has done part of the work.
 */
const ROUNDS = 10;

const isRace = (error: unknown) =>
  LedgerError.isInstance(error, "conflict") || LedgerError.isInstance(error, "run-closed");

function checked(options: SettleCallsInsideOptions): SettleCallsInsideOptions {
  assertObjectArgument(options, "$", "expected { recorder, call, ended }");
  const { recorder, call, ended, leave } = options;
  if (typeof recorder?.recordedChildRuns !== "function" || typeof recorder.child !== "function")
    throw new InvalidArgumentError("$.recorder", "expected a SessionRecorder");
  const request =
    call && ("requestedEventId" in call ? call.requestedEventId : call.requestEventId);
  if (typeof request !== "string")
    throw new InvalidArgumentError(
      "$.call",
      "expected the tool call's attempt, with its request event (requestedEventId, or requestEventId as inspection lists it)",
    );
  const abandoned = ended && "abandoned" in ended ? ended.abandoned : undefined;
  if (
    typeof ended !== "object" ||
    ended === null ||
    ("abandoned" in ended
      ? typeof abandoned !== "string" || abandoned === ""
      : typeof ended.failed !== "boolean")
  )
    throw new InvalidArgumentError(
      "$.ended",
      "expected { failed: false }, { failed: true, error } or { abandoned: reason } with a non-empty reason",
    );
  if (leave !== undefined && typeof leave !== "function")
    throw new InvalidArgumentError("$.leave", "expected a function");
  return options;
}

/**
 * Settles what a tool call that will not run again (answered from the ledger, or abandoned)
 * left in flight in the runs made inside it (its child runs, found by `parentRunId` and
 * `causedByEventId`): depth first, each call in flight there is recorded as abandoned, saying
 * why ("its tool call research (call_0) was abandoned: <reason>", or "left in flight by its
 * tool call ..., which had ended: ..."), a tool call among them has the runs made inside it
 * settled the same way, and then each run is closed as the tool call ended (`cancelled` with
 * the reason of an abandonment). Nothing would ever resolve those calls otherwise: inspection
 * would list them as unresolved for good.
 *
 * Every write is an append with the run's length as this writer read it: a run another writer
 * moves on or closes meanwhile (a resume settling the same call, a person doing it with
 * `agent-ledger resolve`) is read again (`conflict`, `run-closed`), and what the other did is
 * kept: no call is abandoned twice, no run closed twice, and none is closed with a call still in
 * flight. A process that dies part way leaves some calls abandoned and their runs open; running
 * this again (the next resume does) finishes the work.
 *
 * Returns the runs it went through, in the order it came to them.
 */
export async function settleCallsInside(options: SettleCallsInsideOptions): Promise<SettledRun[]> {
  const { recorder, call, ended, leave } = checked(options);
  const request = "requestedEventId" in call ? call.requestedEventId : call.requestEventId;
  const runs = await runsByCallOf(recorder);
  const last = runs.callOf(request);
  if (last === undefined) return [];
  const settled = new Map<string, SettledRun>();
  for (const runId of runs.runsOf(last))
    await settleRun({ parent: recorder, runId, label: toolCallLabel(call), ended, leave, settled });
  return [...settled.values()];
}

interface RunToSettle {
  parent: SessionRecorder;
  runId: string;
  label: string;
  ended: ToolCallEnd;
  leave: SettleCallsInsideOptions["leave"];
  /** What was done to each run so far, by run: a run gone through again adds to its entry. */
  settled: Map<string, SettledRun>;
}

/** Settles one child run, reading it again as long as another writer races this one there. */
async function settleRun(target: RunToSettle): Promise<void> {
  const { parent, runId, leave, settled } = target;
  const { store, sessionId } = parent;
  if (leave?.({ store, sessionId, runId })) return;
  let entry = settled.get(runId);
  if (entry === undefined) {
    entry = { runId, parentRunId: parent.runId, abandoned: [], closed: undefined };
    settled.set(runId, entry);
  }
  let lost: unknown;
  for (let round = 0; round < ROUNDS; round++) {
    // A child of a resumed run reads its run in before its first call; on a started run,
    // `startRun` returns the recorded `run.started` and writes nothing.
    const run = parent.child({ runId, actor: parent.actor });
    await run.startRun();
    if (run.status !== "running") return;
    const events = await readWholeRun(store, { sessionId, runId });
    // Moved on between the two reads: what to abandon is read again with the position.
    if (events.length !== run.length) {
      lost = new ConflictError({
        sessionId,
        runId,
        expectedSeq: run.length,
        actualSeq: events.length,
      });
      continue;
    }
    try {
      await settleOpenRun(run, events, target, entry);
      return;
    } catch (error) {
      if (!isRace(error)) throw error;
      lost = error;
    }
  }
  throw lost;
}

/** The calls in flight on `run` abandoned, the runs made inside its tool calls settled, then it is closed. */
async function settleOpenRun(
  run: SessionRecorder,
  events: readonly LedgerEvent[],
  target: RunToSettle,
  entry: SettledRun,
): Promise<void> {
  const reason = abandonedInside(target.label, target.ended);
  const abandonedNow = new Set<string>();
  for (const call of inspectEvents(run.sessionId, events).unresolved) {
    await run.abandon(call, reason);
    abandonedNow.add(call.attemptId);
    entry.abandoned.push(call);
  }
  // Every tool call of the run has an outcome now: what each left open inside ends its way
  // (one abandoned here with the reason it was abandoned with, one that ended before as it
  // ended), whatever its own tool call did.
  for (const [last, runIds] of (await openRunsByCall(run, events)).calls) {
    const ended = abandonedNow.has(last.attemptId)
      ? { abandoned: reason }
      : (endOfRecorded(last) ?? { abandoned: reason });
    for (const runId of runIds)
      await settleRun({ ...target, parent: run, runId, label: toolCallLabel(last), ended });
  }
  entry.closed = (await closeAsCallEnded(run, target.ended)).type.slice(4) as RunStatus;
}
