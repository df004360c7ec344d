import {
  type AttemptView,
  endedOuterCalls,
  inspectSession,
  LedgerError,
  type LedgerEvent,
  type RunView,
  runsInTreeOrder,
  type SessionInspection,
  SessionRecorder,
  type SettledRun,
} from "@agent-ledger/core";
import { attemptKey } from "../attempt-key.js";
import { CliError, EXIT_CODES, notFoundError, usageError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import { madeAgainText, refusalSavedText } from "../made-again-text.js";
import { inFlightAtPauses, pausedAbove, pausedRuns } from "../paused-runs.js";
import { settledWithOuterRefusal } from "../settled-with-outer.js";
import { assertSessionExists } from "../store.js";
import { commandStoreUrl, hintCommand, storeOption } from "../store-url.js";
import { humanActor } from "./actor.js";
import { attemptKind, finishAbandonment, settledLines, settleInside } from "./calls-inside.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { idArgument } from "./session-args.js";

export const resolveHelp = `agent-ledger resolve <session> <attemptId> --abandon "reason" | --approve "reason" [--run <runId>] [--actor <name>] [--json]
  An id starting with "-" goes after "--": resolve --abandon "reason" -- <session> <attemptId>.
  --json prints the event written.
  Decides what happens to an unresolved attempt (a call left in flight by a crash or by its
  caller stopping it), written by a human actor on the attempt's run:
  --abandon  it will never complete (attempt.abandoned): a resumed agent tells its model the
             call was abandoned instead of running it again: the call's result it reads holds
             the reason word for word (after the adapter's own words, such as LangChain's
             "This tool call did not finish (a crash or an abort cut it off) and was not
             run again: "). Write what you found ("charged already by phone").
             A handoff (inspect says "this call hands off to <agent>") has no result for
             the model: abandoned, it hands off without running its callback again, and
             the reason stays in the ledger.
             For a tool call, the calls it left in flight inside it (in the runs made inside
             it, at any depth) are abandoned too, as "its tool call <name> (<id>) was
             abandoned: <reason>", and those runs cancelled with the reason. Run again on a
             call abandoned already, it settles those still in flight inside it that way
             and exits 0, printing the reason recorded (yours is not written again).
  --approve  run it again (attempt.approved): the next resume makes the call once more, even
             if the tool is not idempotent. If that run dies too, it is unresolved again.
             --approve does not touch the calls inside it: the call runs again as a whole.
  The reason "reason", as inspect prints it in its commands, is refused: it stands for yours.
  A model call is refused: it needs no decision, the next resume makes it again by itself.
  A run paused at an approval (inspect says so) is decided in the app that runs the agent.
  A call in flight inside a tool call that ended is refused: settling that call abandons it
  (run --abandon again on it when it was abandoned; the next resume does it too).
  A run written to after resolve read it (its agent still running, someone resolving another
  of its calls) is read again and decided as it is then: a call that completed meanwhile is
  refused, nothing written (exit 1); written to each of 3 reads, it gives up, nothing written.`;

// The placeholder inspect prints in its commands: pasted as is, it would reach the model.
const PLACEHOLDER = "reason";

// A fork copies a run's prefix with its attemptIds: one id can name an attempt in several runs.
function findAttempts(runs: RunView[], attemptId: string): AttemptView[] {
  const found: AttemptView[] = [];
  for (const { run } of runsInTreeOrder(runs))
    for (const step of run.steps)
      for (const attempt of step.attempts) if (attempt.attemptId === attemptId) found.push(attempt);
  return found;
}

export async function resolveCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs(
    "resolve",
    {
      args: context.args,
      options: {
        abandon: { type: "string" },
        approve: { type: "string" },
        actor: { type: "string" },
        run: { type: "string" },
        json: { type: "boolean" },
      },
      allowPositionals: true,
    },
    { takesIds: true },
  );
  const [session, attempted] = positionals;
  if (!session || !attempted || positionals.length > 2)
    throw usageError(
      'usage: agent-ledger resolve <session> <attemptId> --abandon "reason" | --approve "reason"',
    );
  // Typed as given, for the reads below (each a function of its own).
  const sessionId: string = session;
  const attemptId: string = attempted;
  idArgument(sessionId, "<session>");
  idArgument(attemptId, "<attemptId>");
  idArgument(values.run, "--run");
  idArgument(values.actor, "--actor");
  if ((values.abandon === undefined) === (values.approve === undefined))
    throw usageError('resolve needs exactly one of --abandon "reason" or --approve "reason"');
  const decision = values.abandon !== undefined ? "abandon" : "approve";
  const reason = values.abandon ?? values.approve ?? "";
  if (reason.trim().length === 0) throw usageError(`--${decision} needs a reason`);
  if (reason.trim().toLowerCase() === PLACEHOLDER)
    throw usageError(
      `--${decision} "${PLACEHOLDER}" is the placeholder inspect prints: replace it with what you found${decision === "abandon" ? " (the agent's model reads it as the call's result, a handoff's excepted)" : ""}`,
    );
  const store = await context.openStore();
  await assertSessionExists(store, sessionId, context);
  // Written to between this read and the decision (its agent still running, a resolve of
  // another call of the run): nothing was written, so read again and decide on what is there
  // now: the call completed meanwhile is refused as not unresolved, one abandoned meanwhile
  // is settled as asked.
  for (let read = 1; ; read++) {
    try {
      return await resolveAsRead();
    } catch (error) {
      if (!(error instanceof RunMovedOn)) throw error;
      if (read < READS) continue;
      throw new CliError({
        code: "conflict",
        message: `nothing written: run ${error.runId} was written to each of the ${READS} times resolve read it (is its agent still running?): see ${hintCommand(context, "inspect", [sessionId])}`,
        exitCode: EXIT_CODES.failure,
      });
    }
  }

  async function resolveAsRead(): Promise<number> {
    // Only ids and statuses are read: a session whose blobs are missing can still be resolved.
    const inspection = await inspectSession(store, sessionId, { resolve: false });
    const onRun = (candidate: AttemptView) =>
      candidate.attemptId === attemptId &&
      (values.run === undefined || candidate.runId === values.run);
    const open = inspection.unresolved.filter(onRun);
    if (open.length > 1)
      throw usageError(
        `attempt ${attemptId} is unresolved in runs ${open.map((candidate) => candidate.runId).join(", ")}: pass --run <runId>`,
      );
    const person = humanActor(values.actor, context.io.env);
    // The person's recorder on the attempt's run, read as stored.
    const personOn = (on: AttemptView) =>
      SessionRecorder.resume({ resolve: false, store, sessionId, runId: on.runId, actor: person });
    const attempt = open[0];
    if (attempt === undefined) {
      const recorded = findAttempts(inspection.runs, attemptId).find(onRun);
      if (recorded === undefined)
        throw notFoundError(
          `no attempt ${attemptId}${values.run === undefined ? "" : ` on run ${values.run}`} in session ${sessionId}`,
          `see: ${hintCommand(context, "inspect", [sessionId])}`,
        );
      // Abandoned already (by a resolve that failed part way, run again as it said, or by the
      // agent's resume meanwhile): what was asked for holds; what it left inside is settled.
      if (decision === "abandon" && recorded.status === "abandoned") {
        assertNotPaused(inspection.runs, recorded);
        await writeOut(
          context.io.stdout,
          await finishAbandonment(() => personOn(recorded), recorded, values.json),
        );
        return 0;
      }
      throw new CliError({
        code: "invalid-argument",
        message: `attempt ${attemptId} is not unresolved (it is ${recorded.retriedBy ? `retried by ${recorded.retriedBy}` : recorded.status})`,
        exitCode: EXIT_CODES.failure,
      });
    }
    assertRunOpen(inspection.runs, attempt, decision);
    assertNotPaused(inspection.runs, attempt);
    assertNotHeld(inspection, attempt, context);
    assertNotModelCall(inspection.sessionId, attempt, context);
    if (decision === "approve" && attempt.refusalSaved === true)
      throw usageError(
        `attempt ${attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} cannot be approved for a re-run: ${refusalSavedText}, so no resume makes it again. Abandon it instead: ${hintCommand(context, 'resolve --abandon "reason"', [sessionId, attemptId])}, then replace that saved result with your reason in the agent's state (the resume's refusal says how)`,
      );
    // Approved already: the approval stands (the next resume runs the call again); a second
    // one would only say so twice. An abandonment overrides it, and says so.
    if (decision === "approve" && attempt.approvedAt !== undefined) {
      await writeOut(
        context.io.stdout,
        values.json
          ? `${terminalJson(JSON.stringify({ attemptId, runId: attempt.runId, approvedBy: attempt.approvedBy ?? null, approvedAt: attempt.approvedAt, reason: attempt.approvalReason ?? null, written: false }, null, 2))}\n`
          : `${terminalLine(`attempt ${attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} was approved already by ${approval(attempt)}; nothing written`)}\n`,
      );
      return 0;
    }
    const recorder = await personOn(attempt);
    const decide = decision === "abandon" ? recorder.abandon : recorder.approve;
    let event: LedgerEvent;
    try {
      event = await decide.call(recorder, attempt, reason);
    } catch (error) {
      if (LedgerError.isInstance(error, "conflict")) throw new RunMovedOn(attempt.runId);
      throw error;
    }
    const overrides =
      decision === "abandon" && attempt.approvedAt !== undefined
        ? `, instead of ${attempt.approvedBy ?? "someone"}'s approval (${approval(attempt)})`
        : "";
    const head = `${terminalLine(`${decision === "abandon" ? "abandoned" : "approved a re-run of"} attempt ${attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} at seq ${event.seq}: ${reason}${overrides}`)}\n`;
    // --json prints the decision's event, as before: what follows from it is for inspect to show.
    const json = `${terminalJson(JSON.stringify(event, null, 2))}\n`;
    // Approved, the call runs again, and what it left inside goes on with it: nothing to settle.
    if (decision === "approve") {
      await writeOut(context.io.stdout, values.json ? json : head);
      return 0;
    }
    let settled: SettledRun[];
    try {
      settled = await settleInside(recorder, attempt, reason);
    } catch (error) {
      // The decision is in the ledger: say so before the error about what follows from it.
      await writeOut(context.io.stdout, values.json ? json : head);
      throw error;
    }
    await writeOut(context.io.stdout, values.json ? json : `${head}${settledLines(settled)}`);
    return 0;
  }
}

/** Times resolve reads the session before it gives up on a run that keeps being written to. */
const READS = 3;

/** The decision's append met `conflict`: the run was written to since it was read. */
class RunMovedOn extends Error {
  constructor(readonly runId: string) {
    super(`run ${runId} was written to since it was read`);
    this.name = "RunMovedOn";
  }
}

/**
 * A call the pause keeps open (an agent tool call waiting on an approval inside it) goes on when
 * the app resumes the run with the person's decision: deciding it here would close the agent's
 * run under a run that is still to go on. A call in flight at a crash that the pause asks about
 * as an approval (and the calls paused-runs.ts's inFlightAtPauses says the pause does not keep
 * open) is not: the adapter's resume applies a decision recorded on its attempt, as on any call
 * lost in a crash.
 */
function assertNotPaused(runs: RunView[], attempt: AttemptView): void {
  const inFlight = inFlightAtPauses(runs);
  if (inFlight.attempts.has(attemptKey(attempt)) || inFlight.crashRuns.has(attempt.runId)) return;
  const pausedRun = pausedAbove(runs).get(attempt.runId);
  const pause = pausedRuns(runs).find((paused) => paused.runId === pausedRun);
  if (pause !== undefined)
    throw usageError(
      `attempt ${attempt.attemptId} goes on when run ${pause.runId} does, which is ${pause.text}`,
    );
}

/**
 * A call on a run that is closed (failed or cancelled with the call still in flight) takes no
 * decision: the recorder's refusal (run-closed) told the person to check a resumed recorder's
 * status, words for the app's code.
 */
function assertRunOpen(
  runs: readonly RunView[],
  attempt: AttemptView,
  decision: "abandon" | "approve",
): void {
  const run = runsInTreeOrder(runs).find((entry) => entry.run.runId === attempt.runId)?.run;
  if (run === undefined || run.status === "running") return;
  throw new CliError({
    code: "run-closed",
    message: `attempt ${attempt.attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} cannot be ${decision === "abandon" ? "abandoned" : "approved for a re-run"}: run ${attempt.runId} is ${run.status}, and a closed run takes no more events (no resume goes on with it, so nothing waits on a decision). Nothing written. Check the call's effect by hand: the ledger keeps it unresolved, the record of a call cut off`,
    exitCode: EXIT_CODES.failure,
  });
}

/**
 * A model call needs no decision (DESIGN §7: model calls count as idempotent): the next resume
 * makes it again by itself, as inspect says. Abandoned, it would leave the agent no answer to go
 * on with: every resume of the run would stop at it.
 */
function assertNotModelCall(
  sessionId: string,
  attempt: AttemptView,
  context: CommandContext,
): void {
  if (attempt.kind !== "model") return;
  throw new CliError({
    code: "invalid-argument",
    message: `attempt ${attempt.attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} is not decided by a person: ${madeAgainText(attempt)}. Nothing written. Resume the run (its agent makes the call again), or close it from the app (failRun, cancelRun); see: ${hintCommand(context, "inspect", [sessionId])}`,
    exitCode: EXIT_CODES.failure,
  });
}

/**
 * A call in flight inside a tool call that ended is abandoned when that call is settled (a
 * re-run of `resolve --abandon` on it, or the next resume): an approval of it would be dropped
 * then, and an abandonment is that call's to write, with its reason.
 */
function assertNotHeld(
  inspection: SessionInspection,
  attempt: AttemptView,
  context: CommandContext,
): void {
  const outer = endedOuterCalls(inspection)[inspection.unresolved.indexOf(attempt)];
  if (outer === undefined) return;
  throw usageError(
    settledWithOuterRefusal(
      inspection.sessionId,
      attempt,
      outer,
      storeOption(commandStoreUrl(context)),
    ),
  );
}

/** Who approved `attempt`, when and why, as resolve says it. */
function approval(attempt: AttemptView): string {
  const reason = attempt.approvalReason === undefined ? "" : `: ${attempt.approvalReason}`;
  return `${attempt.approvedBy ?? "someone"} at ${attempt.approvedAt}${reason}`;
}
