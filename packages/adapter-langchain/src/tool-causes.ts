import type { JsonObject, JsonValue, ReplayCursor } from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { isRecord, toJsonValue } from "./plain-json.js";
import { contentCallKey, toolCallKey, toolRequestHash } from "./tool-call-key.js";
import { ledgerToolCallId } from "./tool-claim.js";

/** A tool call as a model's answer lists it. */
export interface AskedToolCall {
  id?: unknown;
  name?: unknown;
  args?: unknown;
}

function contentKey(threadId: string | undefined, name: string, args: JsonValue): string {
  return contentCallKey(threadId, name, toolRequestHash(name, args));
}

/**
 * Which model completion asked for each tool call (its `causedByEventId`), by thread and
 * toolCallId, or for a call without an id by thread, name and arguments. A later completion
 * asking for the same call is the cause.
 *
 * What it keeps of a thread is forgotten when an invocation of the thread settles (`settled`):
 * its calls are then answered, and only the thread's last completion is kept, whose calls a
 * later invocation may still run (a model invoked alone, its tool calls run by the caller).
 * So a handler serving many runs keeps, per thread, no more than its turn in progress.
 */
export class ToolCauses {
  /** The cause of each call, by `toolCallKey` (or `contentKey` for a call without an id). */
  readonly #causes = new Map<string, string>();
  /**
   * The completions noted in each thread (undefined: outside one), oldest first, each with the
   * keys of the calls it asked for: what `settled` forgets.
   */
  readonly #threads = new Map<string | undefined, Map<string, string[]>>();
  /**
   * The last completion of each thread when it last settled: a run read again (`load`) after it
   * brings back nothing of the thread up to it (those calls were answered).
   */
  readonly #settledAt = new Map<string | undefined, string>();
  /** The session commit cursor of each completion the resumed run recorded, by eventId. */
  readonly #recorded = new Map<string, number>();
  /**
   * The model step (the turn) of each completion that may answer the same step as another, by
   * eventId: those the resumed runs recorded, and this process's answers of one of their steps.
   */
  readonly #steps = new Map<string, string>();
  /** The steps of the completions the resumed runs recorded. */
  readonly #recordedSteps = new Set<string>();

  /**
   * The causes of the tool calls a resumed run recorded: from the run the resumed recorder
   * already read, not a second read of it. A completion recorded without its thread (a ledger
   * written before threads were) counts for a call of any thread (see `causeOf`). Of a thread
   * that settled since this process read the run, only what was recorded after it settled.
   */
  load(replay: ReplayCursor): void {
    const read = new Set(replay.modelAttempts.map(({ outcome }) => outcome?.eventId));
    // The threads whose settled point is in this run: their completions up to it are skipped.
    const before = new Set(
      [...this.#settledAt].filter(([, eventId]) => read.has(eventId)).map(([thread]) => thread),
    );
    for (const { requested, outcome: event, stepId } of replay.modelAttempts) {
      if (event?.type !== "model.completed" || !isRecord(event.payload)) continue;
      const threadId = recordedThreadId(requested);
      if (before.has(threadId)) {
        // The last completion, still kept, is read again as the latest (and as recorded).
        if (this.#settledAt.get(threadId) !== event.eventId) continue;
        before.delete(threadId);
      }
      this.#recorded.set(event.eventId, event.commitCursor);
      this.#steps.set(event.eventId, stepId);
      this.#recordedSteps.add(stepId);
      const response = event.payload.response;
      const calls =
        isRecord(response) && Array.isArray(response.toolCalls) ? response.toolCalls : [];
      this.note(
        calls.filter((call): call is JsonObject => isRecord(call)),
        event.eventId,
        threadId,
      );
    }
  }

  /** The model completion `cause`, made in thread `threadId`, asked for these calls. */
  note(calls: readonly AskedToolCall[], cause: string, threadId: string | undefined): void {
    const keys: string[] = [];
    for (const call of calls) {
      const toolCallId = ledgerToolCallId(typeof call.id === "string" ? call.id : undefined);
      if (toolCallId !== undefined) keys.push(toolCallKey(threadId, toolCallId));
      else if (typeof call.name === "string")
        keys.push(contentKey(threadId, call.name, toJsonValue(call.args)));
    }
    for (const key of keys) this.#causes.set(key, cause);
    let completions = this.#threads.get(threadId);
    if (!completions) {
      completions = new Map();
      this.#threads.set(threadId, completions);
    }
    // Noted again (a run read again), it is the latest: moved last.
    completions.delete(cause);
    completions.set(cause, keys);
  }

  /**
   * An invocation of thread `threadId` (undefined: outside one) ended, neither failed nor
   * paused, and none of the thread is in progress: the calls its completions asked for are
   * answered, and LangGraph runs none of them again (a node's retryPolicy is spent). All that is
   * kept of the thread but its last completion is forgotten.
   */
  settled(threadId: string | undefined): void {
    const completions = this.#threads.get(threadId);
    if (!completions) return;
    const last = [...completions.keys()].at(-1);
    for (const [cause, keys] of completions) {
      if (cause === last) continue;
      completions.delete(cause);
      for (const key of keys) if (this.#causes.get(key) === cause) this.#causes.delete(key);
      const step = this.#steps.get(cause);
      this.#steps.delete(cause);
      if (
        this.#recorded.delete(cause) &&
        step !== undefined &&
        this.#steps.get(last ?? "") !== step
      )
        this.#recordedSteps.delete(step);
    }
    if (last !== undefined) this.#settledAt.set(threadId, last);
  }

  /**
   * The completion `cause`, this process's, is an answer of the model step `stepId` (an attempt
   * of its turn). Kept only for a step a resumed run recorded: `sameTurn` is asked of a recorded
   * call's cause, a completion read with its run (`load`), so an answer of any other step is
   * never read. A handler that resumed nothing, or that is past what it resumed, keeps nothing
   * per model call however long it runs (a run read again reads this one's completions again).
   */
  noteStep(cause: string, stepId: string): void {
    if (this.#recordedSteps.has(stepId)) this.#steps.set(cause, stepId);
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return {
      causes: this.#causes.size,
      threadCompletions: [...this.#threads.values()].reduce((sum, each) => sum + each.size, 0),
      recordedCauses: this.#recorded.size,
      steps: this.#steps.size,
      recordedSteps: this.#recordedSteps.size,
    };
  }

  /**
   * True when the completions `cause` and `other` answer the same model step: the same turn,
   * its call made again (a resumed run calls a model live that the ledger cannot answer, e.g.
   * a sub-agent's, run again with the tool it is inside), not another turn.
   */
  sameTurn(cause: string, other: string): boolean {
    const step = this.#steps.get(cause);
    return step !== undefined && step === this.#steps.get(other);
  }

  /**
   * The session commit cursor of `cause` when it is a completion recorded before this process
   * resumed the run (undefined for one of this process's own).
   */
  recordedAt(cause: string): number | undefined {
    return this.#recorded.get(cause);
  }

  /**
   * eventId of the model completion of thread `threadId` that asked for this tool call, when
   * known; else that of a completion recorded without a thread.
   */
  causeOf(
    threadId: string | undefined,
    toolCallId: string | undefined,
    call?: { name: string; args: JsonValue },
  ): string | undefined {
    if (toolCallId !== undefined)
      return (
        this.#causes.get(toolCallKey(threadId, toolCallId)) ??
        this.#causes.get(toolCallKey(undefined, toolCallId))
      );
    if (!call) return undefined;
    return (
      this.#causes.get(contentKey(threadId, call.name, call.args)) ??
      this.#causes.get(contentKey(undefined, call.name, call.args))
    );
  }
}
