import { DEFAULT_BLOB_GRACE_MS } from "@agent-ledger/core";
import { EXIT_CODES, usageError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import { assertSessionExists } from "../store.js";
import { hintCommand } from "../store-url.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { BLOB_GRACE_FORMS, formatDuration, graceText, idArgument } from "./session-args.js";
import { DELETION_ARGS, deleteOneSession, deletionOptions } from "./session-deletion.js";

export const deleteHelp = `agent-ledger delete <session> --yes [--cancel-open "reason"] [--blob-grace <duration>] [--actor <name>] [--json]
  Deletes the session for good: its events, its runs, and the blobs it names or had put for it
  that no other session references. Without --yes nothing is deleted (exit 2).
  Every run must be closed (completed, failed or cancelled), or the command fails (exit 1).
  --cancel-open  cancels the runs still open first (run.cancelled with the reason, written as
                 a human actor, --actor or the login name), e.g. a crashed agent's that will
                 never be resumed.
  --blob-grace   a blob put within it, on the database's clock, is kept: a writer may be about
                 to name it (default ${formatDuration(DEFAULT_BLOB_GRACE_MS)}; ${BLOB_GRACE_FORMS}).
  --json prints the counts as JSON.`;

export async function deleteCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs(
    "delete",
    {
      args: context.args,
      options: DELETION_ARGS,
      allowPositionals: true,
    },
    { takesIds: true },
  );
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError('usage: agent-ledger delete <session> --yes [--cancel-open "reason"]');
  idArgument(sessionId, "<session>");
  const options = {
    ...deletionOptions(values, context.io.env),
    cancelOpenCommand: hintCommand(context, 'delete --yes --cancel-open "reason"', [sessionId]),
  };
  if (values.yes !== true)
    throw usageError(
      `delete removes session ${JSON.stringify(sessionId)} for good; nothing was deleted`,
      `to delete it: ${hintCommand(context, "delete --yes", [sessionId])}`,
    );
  const store = await context.openStore();
  await assertSessionExists(store, sessionId, context);
  const result = await deleteOneSession(store, sessionId, options);
  const grace = graceText(options.blobGrace);
  await writeOut(
    context.io.stdout,
    values.json
      ? `${terminalJson(JSON.stringify(result, null, 2))}\n`
      : `${[
          ...result.cancelledRuns.map(
            (runId) => `cancelled open run ${runId}: ${options.cancelReason}`,
          ),
          `deleted session ${sessionId}: ${result.deletedEvents} events in ${result.deletedRuns} run(s)`,
          `blobs: ${result.deletedBlobs} deleted, ${result.keptBlobs} kept (named by another session, or put within the last ${grace})`,
        ]
          .map(terminalLine)
          .join("\n")}\n`,
  );
  return EXIT_CODES.ok;
}
