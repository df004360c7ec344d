import { ConflictError, type JsonObject, type LedgerEvent } from "@agent-ledger/core";
import { CHECKPOINT_KIND } from "./checkpoint-index.js";

/**
 * The checkpoint a saver's graph goes on from, in one namespace of a thread: the one it put
 * last, or read as the thread's latest; `seq` is where its thread log had read up to then.
 */
export interface CheckpointHead {
  checkpointId: string;
  seq: number;
}

/**
 * The id of a checkpoint another writer put after `parentId`, the head this saver's graph goes
 * on from, since the saver took it as its head: another process went on from the same
 * checkpoint (it resumed the thread while this one was taken for dead). Undefined when there is
 * none, or when `parentId` is not the head (a graph going on from an older checkpoint on purpose:
 * time travel, `updateState`). `events` are the thread's, in seq order.
 */
export function childPutElsewhere(
  events: readonly LedgerEvent[],
  head: CheckpointHead | undefined,
  checkpointNs: string,
  parentId: string,
): string | undefined {
  if (head?.checkpointId !== parentId) return undefined;
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index] as LedgerEvent;
    if (event.seq < head.seq) return undefined;
    const payload = event.payload as JsonObject | null;
    if (
      event.type === "checkpoint.saved" &&
      payload?.kind === CHECKPOINT_KIND &&
      payload.checkpointNs === checkpointNs &&
      payload.parentCheckpointId === parentId
    )
      return String(payload.checkpointId);
  }
  return undefined;
}

/**
 * The `conflict` of a `put` whose parent another writer went on from already: saved, it would be
 * the thread's latest checkpoint (the newest id), and the next invocation would go on from the
 * state of a process that lost the thread, dropping what the other wrote after that parent.
 * Also of a task's writes (`putWrites`, `refused: "writes"`) on that checkpoint: saved, a
 * task's `__error__` (the lost recorder's conflict) or result would stand in `getState` and
 * `getStateHistory` for a step the other writer did.
 */
export function continuedElsewhere(options: {
  sessionId: string;
  runId: string;
  threadId: string;
  parentId: string;
  childId: string;
  head: CheckpointHead;
  actualSeq: number;
  /** What was not saved: the checkpoint put, or a task's writes on `parentId`. */
  refused: "checkpoint" | "writes";
}): ConflictError {
  const { sessionId, runId, threadId, parentId, childId, head, actualSeq, refused } = options;
  const what = refused === "writes" ? "this task's writes were" : "this checkpoint was";
  return new ConflictError({
    sessionId,
    runId,
    expectedSeq: head.seq,
    actualSeq,
    message: `thread ${threadId}: checkpoint ${parentId}, which this graph goes on from, was gone on from by another writer (checkpoint ${childId}) since this process saved or read it: another process has this thread (it resumed the run while this one was taken for dead), so ${what} not saved, and this graph cannot go on: leave the thread to that writer`,
  });
}
