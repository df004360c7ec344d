import { userInfo } from "node:os";
import { parseArgs } from "node:util";
import {
  type AttemptView,
  inspectSession,
  type RunView,
  SessionRecorder,
} from "@agent-ledger/core";
import { CliError, EXIT_CODES, notFoundError, usageError } from "../errors.js";
import { writeOut } from "../io.js";
import { assertSessionExists } from "../store.js";
import type { CommandContext } from "./context.js";

export const resolveHelp = `agent-ledger resolve <session> <attemptId> --abandon "reason" [--actor <name>]
  Records that an unresolved attempt will never complete (attempt.abandoned, written by a
  human actor on the attempt's run). A resumed agent then tells its model the call was
  abandoned instead of running it again.`;

function findAttempt(runs: RunView[], attemptId: string): AttemptView | undefined {
  for (const run of runs) {
    for (const step of run.steps)
      for (const attempt of step.attempts) if (attempt.attemptId === attemptId) return attempt;
    const found = findAttempt(run.children, attemptId);
    if (found) return found;
  }
  return undefined;
}

function defaultActor(env: Record<string, string | undefined>): string {
  try {
    return env.USER ?? userInfo().username;
  } catch {
    return "agent-ledger-cli";
  }
}

export async function resolveCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args: context.args,
    options: { abandon: { type: "string" }, actor: { type: "string" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  const [sessionId, attemptId] = positionals;
  if (!sessionId || !attemptId || positionals.length > 2)
    throw usageError('usage: agent-ledger resolve <session> <attemptId> --abandon "reason"');
  const reason = values.abandon;
  if (reason === undefined || reason.trim().length === 0)
    throw usageError('resolve needs --abandon "reason" (the only resolution the CLI records)');
  const store = await context.openStore();
  await assertSessionExists(store, sessionId);
  const inspection = await inspectSession(store, sessionId);
  const attempt = findAttempt(inspection.runs, attemptId);
  if (!attempt)
    throw notFoundError(
      `no attempt ${attemptId} in session ${sessionId}`,
      `see: agent-ledger inspect ${sessionId}`,
    );
  if (attempt.status !== "requested" || attempt.retriedBy !== undefined) {
    throw new CliError({
      code: "invalid-argument",
      message: `attempt ${attemptId} is not unresolved (it is ${attempt.retriedBy ? `retried by ${attempt.retriedBy}` : attempt.status})`,
      exitCode: EXIT_CODES.failure,
    });
  }
  const recorder = await SessionRecorder.resume({
    store,
    sessionId,
    runId: attempt.runId,
    actor: { type: "human", id: values.actor ?? defaultActor(context.io.env) },
  });
  const event = await recorder.abandon(
    {
      stepId: attempt.stepId,
      attemptId: attempt.attemptId,
      requestedEventId: attempt.requestEventId,
      ...(attempt.toolCallId ? { toolCallId: attempt.toolCallId } : {}),
    },
    reason,
  );
  await writeOut(
    context.io.stdout,
    values.json
      ? `${JSON.stringify(event, null, 2)}\n`
      : `abandoned attempt ${attemptId} (${attempt.kind} ${attempt.name ?? ""}) on run ${attempt.runId} at seq ${event.seq}: ${reason}\n`,
  );
  return 0;
}
