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
 */
export class ToolCauses {
  readonly #byId = new Map<string, string>();
  readonly #byContent = new Map<string, string>();
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
   * written before threads were) counts for a call of any thread (see `causeOf`).
   */
  load(replay: ReplayCursor): void {
    for (const { requested, outcome: event, stepId } of replay.modelAttempts) {
      if (event?.type !== "model.completed" || !isRecord(event.payload)) continue;
      this.#recorded.set(event.eventId, event.commitCursor);
      this.#steps.set(event.eventId, stepId);
      this.#recordedSteps.add(stepId);
      const response = event.payload.response;
      const calls =
        isRecord(response) && Array.isArray(response.toolCalls) ? response.toolCalls : [];
      this.note(
        calls.filter((call): call is JsonObject => isRecord(call)),
        event.eventId,
        recordedThreadId(requested),
      );
    }
  }

  /** The model completion `cause`, made in thread `threadId`, asked for these calls. */
  note(calls: readonly AskedToolCall[], cause: string, threadId: string | undefined): void {
    for (const call of calls) {
      const toolCallId = ledgerToolCallId(typeof call.id === "string" ? call.id : undefined);
      if (toolCallId !== undefined) this.#byId.set(toolCallKey(threadId, toolCallId), cause);
      else if (typeof call.name === "string")
        this.#byContent.set(contentKey(threadId, call.name, toJsonValue(call.args)), cause);
    }
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

  /**
   * How many completions' steps are kept: no more than the resumed runs recorded and this
   * process's answers of their steps, whatever the number of model calls made since.
   */
  get stepsKept(): number {
    return this.#steps.size;
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
        this.#byId.get(toolCallKey(threadId, toolCallId)) ??
        this.#byId.get(toolCallKey(undefined, toolCallId))
      );
    if (!call) return undefined;
    return (
      this.#byContent.get(contentKey(threadId, call.name, call.args)) ??
      this.#byContent.get(contentKey(undefined, call.name, call.args))
    );
  }
}
