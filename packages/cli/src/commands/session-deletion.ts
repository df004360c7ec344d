import {
  type DeleteSessionOptions,
  type DeleteSessionResult,
  type EventStore,
  LedgerError,
  SessionRecorder,
} from "@agent-ledger/core";
import { CliError, EXIT_CODES, usageError } from "../errors.js";
import { shellQuote } from "../format.js";
import { humanActor } from "./actor.js";
import { blobGraceOption, idArgument } from "./session-args.js";

/** How `delete` and `prune` delete one session. */
export interface SessionDeletionOptions {
  /** Cancel the runs still open first, with this reason; else a run open refuses. */
  cancelReason: string | undefined;
  actor: { type: "human"; id: string };
  /** The store's retention options from `--blob-grace`. */
  blobGrace: DeleteSessionOptions;
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
 * Deletes one session (`store.deleteSession`), first cancelling its open runs when told to.
 * A run still open is a CliError (exit 1) that names `--cancel-open`; nothing is deleted.
 */
export async function deleteOneSession(
  store: EventStore,
  sessionId: string,
  options: SessionDeletionOptions,
): Promise<SessionDeletion> {
  const cancelledRuns =
    options.cancelReason === undefined
      ? []
      : await cancelOpenRuns(store, sessionId, options.cancelReason, options.actor);
  try {
    const result = await store.deleteSession(sessionId, options.blobGrace);
    return { ...result, cancelledRuns };
  } catch (error) {
    // The store refuses a session with a run still open (a writer may still be at it).
    if (LedgerError.isInstance(error, "invalid-argument") && error.path === "$.sessionId")
      throw new OpenRunRefusal({
        code: "invalid-argument",
        message: `${error.message}; nothing was deleted`,
        exitCode: EXIT_CODES.failure,
        hint: `if no agent will resume it: agent-ledger delete ${shellQuote(sessionId)} --yes --cancel-open "reason"`,
      });
    throw error;
  }
}

/** The ids of the session's runs still open (neither completed, failed nor cancelled). */
export async function openRuns(store: EventStore, sessionId: string): Promise<string[]> {
  return (await store.listRuns(sessionId))
    .filter((run) => run.status === "running")
    .map((run) => run.runId);
}

/** Closes each run of the session that is still open as cancelled; returns their ids. */
async function cancelOpenRuns(
  store: EventStore,
  sessionId: string,
  reason: string,
  actor: { type: "human"; id: string },
): Promise<string[]> {
  const open = await openRuns(store, sessionId);
  for (const runId of open) {
    const recorder = await SessionRecorder.resume({
      resolve: false,
      store,
      sessionId,
      runId,
      actor,
    });
    await recorder.cancelRun(reason);
  }
  return open;
}
