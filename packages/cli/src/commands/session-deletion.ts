import {
  ConflictError,
  type DeleteSessionOptions,
  type DeleteSessionResult,
  type EventStore,
  LedgerError,
  SessionRecorder,
} from "@agent-ledger/core";
import { CliError, EXIT_CODES, usageError, withoutPath } from "../errors.js";
import { humanActor } from "./actor.js";
import { blobGraceOption, idArgument } from "./session-args.js";

/** How `delete` and `prune` delete one session. */
export interface SessionDeletionOptions {
  /** Cancel the runs still open first, with this reason; else a run open refuses. */
  cancelReason: string | undefined;
  actor: { type: "human"; id: string };
  /** The store's retention options from `--blob-grace`. */
  blobGrace: DeleteSessionOptions;
  /** The command that deletes the session with its open runs cancelled, for the refusal's hint. */
  cancelOpenCommand?: string;
}

/** The options `delete` and `prune` share, for `parseArgs`. */
export const DELETION_ARGS = {
  yes: { type: "boolean" },
  "cancel-open": { type: "string" },
  "blob-grace": { type: "string" },
  actor: { type: "string" },
  json: { type: "boolean" },
} as const;

/**
 * `SessionDeletionOptions` from the shared options, each checked (bad usage, exit 2): the
 * actor an id, the grace a duration, a cancellation's reason not blank.
 */
export function deletionOptions(
  values: { "cancel-open"?: string; "blob-grace"?: string; actor?: string },
  env: Record<string, string | undefined>,
): SessionDeletionOptions {
  idArgument(values.actor, "--actor");
  const blobGrace = blobGraceOption(values["blob-grace"]);
  const cancelReason = values["cancel-open"];
  if (cancelReason !== undefined && cancelReason.trim().length === 0)
    throw usageError("--cancel-open needs a reason");
  return { cancelReason, actor: humanActor(values.actor, env), blobGrace };
}

/** What deleting one session did: the store's counts and the runs cancelled first. */
export type SessionDeletion = DeleteSessionResult & { cancelledRuns: string[] };

/** A session that still has a run open, so nothing of it was deleted: the command fails (exit 1). */
export class OpenRunRefusal extends CliError {}

/**
 * A session written since the caller looked at it (`eventCount`), so nothing of it was deleted:
 * an agent came back to it. `prune` keeps it: it is no longer as old as it was judged.
 */
export class WrittenSince extends Error {
  constructor(
    readonly sessionId: string,
    readonly looked: number,
    /** Its count as found, when known (a cancellation refused for a run moved on: more). */
    readonly found?: number,
  ) {
    super(
      `written since it was looked at (${looked} events then, ${found ?? "more"} now): kept, nothing deleted`,
    );
  }
}

/**
 * Deletes one session (`store.deleteSession`), first cancelling its open runs when told to.
 * A run still open is a CliError (exit 1) that names `--cancel-open`; nothing is deleted.
 * With `eventCount` (the session's count when the caller chose it), a session written since
 * is `WrittenSince`: the store checks it under the deletion's lock, and no run started since is
 * cancelled (the open runs are listed before the session is found unchanged).
 */
export async function deleteOneSession(
  store: EventStore,
  sessionId: string,
  options: SessionDeletionOptions,
  eventCount?: number,
): Promise<SessionDeletion> {
  let expected = eventCount;
  let cancelledRuns: string[] = [];
  if (options.cancelReason !== undefined) {
    const open = await openRunLengths(store, sessionId);
    if (expected !== undefined) await assertUnchanged(store, sessionId, expected, []);
    try {
      cancelledRuns = await cancelRuns(
        store,
        sessionId,
        open,
        options.cancelReason,
        options.actor,
        {
          atListedLength: expected !== undefined,
        },
      );
    } catch (error) {
      // A run moved on under the cancellation: an agent is writing to it.
      if (expected !== undefined && LedgerError.isInstance(error, "conflict"))
        throw new WrittenSince(sessionId, expected);
      throw error;
    }
    // The cancellations are the only events after the count looked at, else it was written.
    if (expected !== undefined)
      expected = await assertUnchanged(store, sessionId, expected, cancelledRuns, options.actor);
  }
  try {
    const result = await store.deleteSession(sessionId, {
      ...options.blobGrace,
      ...(expected === undefined ? {} : { eventCount: expected }),
    });
    return { ...result, cancelledRuns };
  } catch (error) {
    if (LedgerError.isInstance(error, "conflict") && eventCount !== undefined)
      throw new WrittenSince(sessionId, eventCount, error.actualSeq);
    // The store refuses a session with a run still open (a writer may still be at it).
    if (LedgerError.isInstance(error, "invalid-argument") && error.path === "$.sessionId")
      throw new OpenRunRefusal({
        code: "invalid-argument",
        // The store's message without its path: a person reads it, under the session's id.
        message: `${withoutPath(error)}; nothing was deleted`,
        exitCode: EXIT_CODES.failure,
        ...(options.cancelOpenCommand === undefined
          ? {}
          : { hint: `if no agent will resume it: ${options.cancelOpenCommand}` }),
      });
    throw error;
  }
}

/** The ids of the session's runs still open (neither completed, failed nor cancelled). */
export async function openRuns(store: EventStore, sessionId: string): Promise<string[]> {
  return [...(await openRunLengths(store, sessionId)).keys()];
}

/** The session's runs still open, with their lengths as listed. */
async function openRunLengths(store: EventStore, sessionId: string): Promise<Map<string, number>> {
  const open = new Map<string, number>();
  for (const run of await store.listRuns(sessionId))
    if (run.status === "running") open.set(run.runId, run.length);
  return open;
}

/**
 * The session's event count once the events after `looked` are checked to be this command's
 * own cancellations of `cancelled` (by `actor`); else `WrittenSince`.
 */
async function assertUnchanged(
  store: EventStore,
  sessionId: string,
  looked: number,
  cancelled: string[],
  actor?: { type: "human"; id: string },
): Promise<number> {
  const ours = new Set(cancelled);
  let count = looked;
  for (let after = looked; ; ) {
    const page = await store.readSession({ sessionId, after, limit: 500 });
    for (const event of page.events) {
      const own =
        event.type === "run.cancelled" &&
        ours.has(event.runId) &&
        event.actor?.type === actor?.type &&
        event.actor?.id === actor?.id;
      if (!own) throw new WrittenSince(sessionId, looked, event.commitCursor);
      count = event.commitCursor;
    }
    if (page.events.length < 500) return count;
    after = page.nextCursor;
  }
}

/**
 * Closes each of the session's runs `open` as cancelled; returns their ids. `atListedLength`:
 * only a run still at the length listed (an agent that wrote to it since is live: a
 * `conflict`, that run left open), the cancellation appended at that length.
 */
async function cancelRuns(
  store: EventStore,
  sessionId: string,
  open: Map<string, number>,
  reason: string,
  actor: { type: "human"; id: string },
  options: { atListedLength: boolean },
): Promise<string[]> {
  for (const [runId, length] of open) {
    const recorder = await SessionRecorder.resume({
      resolve: false,
      store,
      sessionId,
      runId,
      actor,
    });
    // The resume read the run as it is now; its append is made at that length, so a write
    // after this check still meets conflict.
    if (options.atListedLength && recorder.length !== length)
      throw new ConflictError({
        sessionId,
        runId,
        expectedSeq: length,
        actualSeq: recorder.length,
      });
    await recorder.cancelRun(reason);
  }
  return [...open.keys()];
}
