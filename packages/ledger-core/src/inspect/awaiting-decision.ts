import { type ResolveOptions, resolvePayload } from "../compact/resolve.js";
import { isJsonObject, type JsonValue } from "../events/json.js";
import { EVENT_TYPES, type LedgerEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { type RunInTree, runsInTreeOrder } from "./run-tree-order.js";

/**
 * The field of a `checkpoint.saved` payload with which an adapter says that its run is paused
 * until a person decides on some calls (a tool approval):
 * `{ calls: AwaitedCallView[], decideWith?: string, endedBy?: string[] }`. `endedBy` names the
 * event types (the adapter's own, `x.*`) with which the adapter records a decision on the
 * calls: one of them in the run's tree after the checkpoint ends the pause, as a call does.
 * Any framework may write it; inspection reads nothing else of the payload.
 */
export const AWAITING_DECISION_FIELD = "awaitingDecision";

/** A call a paused run waits on a person to decide, as its adapter recorded it. */
export interface AwaitedCallView {
  /** The tool the call is to. */
  name: string;
  toolCallId?: string;
  /** The call's arguments. */
  args?: JsonValue;
  /** The agent whose call it is, when the adapter names it (a sub-agent's, a handoff's). */
  agent?: string;
  /**
   * Set when the call is one a crash left in flight that the adapter asks about as an approval:
   * the attempt that was in flight (unresolved in the ledger). It may have had its effect, and a
   * decision recorded on that attempt (`agent-ledger resolve`) is one the adapter's resume applies.
   */
  inFlightAttemptId?: string;
}

/**
 * A run paused until a person decides (`RunView.awaitingDecision`): the latest
 * `checkpoint.saved` of the run names the calls (`AWAITING_DECISION_FIELD`), the run is still
 * running, and no call was made or decided in its tree since (no model or tool event, no
 * `attempt.abandoned` or `attempt.approved`, no event of a type its `endedBy` names, in the run
 * or any run below it).
 */
export interface AwaitingDecisionView {
  /** Seq of the checkpoint that paused the run. */
  checkpointSeq: number;
  /** When that checkpoint was recorded. */
  since: string;
  calls: AwaitedCallView[];
  /** How the app that runs the agent takes the decision, as its adapter words it. */
  decideWith?: string;
}

// What ends a pause: a call made or decided in the paused run's tree (model.*, tool.*, attempt.*).
const MOVES_ON = new Set<string>(
  EVENT_TYPES.filter((type) => /^(model|tool|attempt)\./.test(type)),
);

function awaitedCall(value: JsonValue): AwaitedCallView | undefined {
  if (!isJsonObject(value) || typeof value.name !== "string") return undefined;
  const call: AwaitedCallView = { name: value.name };
  if (typeof value.toolCallId === "string") call.toolCallId = value.toolCallId;
  if (value.args !== undefined) call.args = value.args;
  if (typeof value.agent === "string") call.agent = value.agent;
  if (typeof value.inFlightAttemptId === "string") call.inFlightAttemptId = value.inFlightAttemptId;
  return call;
}

// The pause a checkpoint records, if it records one (entries without a name are left out), and
// the event types besides calls that end it.
function pauseOf(
  event: LedgerEvent,
): { pause: AwaitingDecisionView; endedBy: string[] } | undefined {
  const field = isJsonObject(event.payload) ? event.payload[AWAITING_DECISION_FIELD] : undefined;
  if (!isJsonObject(field) || !Array.isArray(field.calls)) return undefined;
  const calls = field.calls.flatMap((value) => awaitedCall(value) ?? []);
  if (calls.length === 0) return undefined;
  const pause: AwaitingDecisionView = { checkpointSeq: event.seq, since: event.recordedAt, calls };
  if (typeof field.decideWith === "string") pause.decideWith = field.decideWith;
  const endedBy = Array.isArray(field.endedBy)
    ? field.endedBy.filter((type): type is string => typeof type === "string")
    : [];
  return { pause, endedBy };
}

/**
 * `events` with the pause field of each checkpoint resolved (§8), for an inspection that leaves
 * the rest as stored: the recorder moves any subtree of a checkpoint over its threshold to a
 * blob, the list of calls too when their arguments are long, and a pause read as stored would
 * name no call. The field is what a person deciding on the run reads: resolved whole, the
 * calls' arguments too. Other events are returned as they are.
 */
export async function resolvePauses(
  store: EventStore,
  events: readonly LedgerEvent[],
  options: ResolveOptions,
): Promise<LedgerEvent[]> {
  const out = events.slice();
  for (let index = 0; index < out.length; index++) {
    const event = out[index] as LedgerEvent;
    if (event.type !== "checkpoint.saved" || !isJsonObject(event.payload)) continue;
    const field = event.payload[AWAITING_DECISION_FIELD];
    if (field === undefined) continue;
    const resolved = await resolvePayload(store, field, options);
    out[index] = { ...event, payload: { ...event.payload, [AWAITING_DECISION_FIELD]: resolved } };
  }
  return out;
}

/** A run as `PausedRuns.mark` walks it (the inspection's RunView). */
interface RunNode {
  runId: string;
  status: string;
  children: RunNode[];
  awaitingDecision?: AwaitingDecisionView;
}

/**
 * Which runs are paused awaiting a decision, from events seen in commit order: the latest
 * checkpoint of each run, the position of the last call event of each run and that of the last
 * event of each other type (for `endedBy`).
 */
export class PausedRuns {
  readonly #checkpoints = new Map<
    string,
    { position: number; paused?: { pause: AwaitingDecisionView; endedBy: string[] } }
  >();
  readonly #lastCall = new Map<string, number>();
  readonly #lastOfType = new Map<string, Map<string, number>>();
  #position = 0;

  add(event: LedgerEvent): void {
    const position = this.#position++;
    if (event.type === "checkpoint.saved") {
      const paused = pauseOf(event);
      this.#checkpoints.set(event.runId, paused ? { position, paused } : { position });
    } else if (MOVES_ON.has(event.type)) this.#lastCall.set(event.runId, position);
    else {
      const ofRun = this.#lastOfType.get(event.runId) ?? new Map<string, number>();
      ofRun.set(event.type, position);
      this.#lastOfType.set(event.runId, ofRun);
    }
  }

  // The position of the last event of one of `types` in the tree of `run`.
  #lastIn(run: RunNode, types: readonly string[]): number {
    let last = -1;
    if (types.length === 0) return last;
    for (const { run: each } of runsInTreeOrder([run])) {
      const own = this.#lastOfType.get(each.runId);
      for (const type of types) last = Math.max(last, own?.get(type) ?? -1);
    }
    return last;
  }

  /** Sets `awaitingDecision` on each running run of the trees under `roots` whose pause holds. */
  mark(roots: RunNode[]): void {
    // The position of the last call event in each run's tree: read backwards, the tree order
    // has every run after the runs under it.
    const lastInTree = new Map<RunNode, number>();
    const order = runsInTreeOrder(roots);
    for (let index = order.length - 1; index >= 0; index--) {
      const { run } = order[index] as RunInTree<RunNode>;
      let last = this.#lastCall.get(run.runId) ?? -1;
      for (const child of run.children) last = Math.max(last, lastInTree.get(child) ?? -1);
      lastInTree.set(run, last);
      const checkpoint = this.#checkpoints.get(run.runId);
      if (
        checkpoint?.paused &&
        run.status === "running" &&
        Math.max(last, this.#lastIn(run, checkpoint.paused.endedBy)) < checkpoint.position
      )
        run.awaitingDecision = checkpoint.paused.pause;
    }
  }
}
