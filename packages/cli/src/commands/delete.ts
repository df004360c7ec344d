import { parseArgs } from "node:util";
import {
  DEFAULT_BLOB_GRACE_MS,
  type EventStore,
  LedgerError,
  SessionRecorder,
} from "@agent-ledger/core";
import { CliError, EXIT_CODES, usageError } from "../errors.js";
import { shellQuote, terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import { assertSessionExists } from "../store.js";
import { humanActor } from "./actor.js";
import type { CommandContext } from "./context.js";
import { durationOption, formatDuration, idArgument } from "./session-args.js";

export const deleteHelp = `agent-ledger delete <session> --yes [--cancel-open "reason"] [--blob-grace <duration>] [--actor <name>] [--json]
  Deletes the session for good: its events, its runs, and the blobs it names or had put for it
  that no other session references. Without --yes nothing is deleted (exit 2).
  Every run must be closed (completed, failed or cancelled), or the command fails (exit 1).
  --cancel-open  cancels the runs still open first (run.cancelled with the reason, written as
                 a human actor, --actor or the login name), e.g. a crashed agent's that will
                 never be resumed.
  --blob-grace   a blob put within it, on the database's clock, is kept: a writer may be about
                 to name it (default ${formatDuration(DEFAULT_BLOB_GRACE_MS)}; 600000, 500ms, 30s, 10m, 2h, 1d).
  --json prints the counts as JSON.`;

export async function deleteCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args: context.args,
    options: {
      yes: { type: "boolean" },
      "cancel-open": { type: "string" },
      "blob-grace": { type: "string" },
      actor: { type: "string" },
      json: { type: "boolean" },
    },
    allowPositionals: true,
    strict: true,
  });
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError('usage: agent-ledger delete <session> --yes [--cancel-open "reason"]');
  idArgument(sessionId, "<session>");
  idArgument(values.actor, "--actor");
  const blobGraceMs = durationOption("blob-grace", values["blob-grace"]);
  const cancelReason = values["cancel-open"];
  if (cancelReason !== undefined && cancelReason.trim().length === 0)
    throw usageError("--cancel-open needs a reason");
  if (values.yes !== true)
    throw usageError(
      `delete removes session ${JSON.stringify(sessionId)} for good; nothing was deleted`,
      `to delete it: agent-ledger delete ${shellQuote(sessionId)} --yes`,
    );
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  const cancelled =
    cancelReason === undefined
      ? []
      : await cancelOpenRuns(
          store,
          sessionId,
          cancelReason,
          humanActor(values.actor, context.io.env),
        );
  let result: Awaited<ReturnType<EventStore["deleteSession"]>>;
  try {
    result = await store.deleteSession(sessionId, blobGraceMs === undefined ? {} : { blobGraceMs });
  } catch (error) {
    // The store refuses a session with a run still open (a writer may still be at it).
    if (LedgerError.isInstance(error, "invalid-argument") && error.path === "$.sessionId")
      throw new CliError({
        code: "invalid-argument",
        message: `${error.message}; nothing was deleted`,
        exitCode: EXIT_CODES.failure,
        hint: `if no agent will resume it: agent-ledger delete ${shellQuote(sessionId)} --yes --cancel-open "reason"`,
      });
    throw error;
  }
  const grace = formatDuration(blobGraceMs ?? DEFAULT_BLOB_GRACE_MS);
  await writeOut(
    context.io.stdout,
    values.json
      ? `${terminalJson(JSON.stringify({ ...result, cancelledRuns: cancelled }, null, 2))}\n`
      : `${[
          ...cancelled.map((runId) => `cancelled open run ${runId}: ${cancelReason}`),
          `deleted session ${sessionId}: ${result.deletedEvents} events in ${result.deletedRuns} run(s)`,
          `blobs: ${result.deletedBlobs} deleted, ${result.keptBlobs} kept (named by another session, or put within the last ${grace})`,
        ]
          .map(terminalLine)
          .join("\n")}\n`,
  );
  return EXIT_CODES.ok;
}

/** Closes each run of the session that is still open as cancelled; returns their ids. */
async function cancelOpenRuns(
  store: EventStore,
  sessionId: string,
  reason: string,
  actor: { type: "human"; id: string },
): Promise<string[]> {
  const open = (await store.listRuns(sessionId)).filter((run) => run.status === "running");
  for (const run of open) {
    const recorder = await SessionRecorder.resume({
      resolve: false,
      store,
      sessionId,
      runId: run.runId,
      actor,
    });
    await recorder.cancelRun(reason);
  }
  return open.map((run) => run.runId);
}
