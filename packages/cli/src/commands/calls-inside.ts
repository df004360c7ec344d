import {
  type AttemptView,
  LedgerError,
  readWholeRun,
  type SessionRecorder,
  type SettledRun,
  settleCallsInside,
} from "@agent-ledger/core";
import { CliError, exitCodeOf } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";

/** What an attempt is, as resolve names it: `tool research`, `model`. */
export function attemptKind(attempt: AttemptView): string {
  return [attempt.kind, attempt.name].filter(Boolean).join(" ");
}

/**
 * The calls an abandoned tool call left in flight inside it (in the runs made inside it, found by
 * parentRunId and causedByEventId, at any depth), abandoned with its reason and those runs
 * cancelled, as the next resume of its agent would: at once, so inspect lists none of them as
 * unresolved. Written by `recorder` (the person's, on the call's run). A call the ledger could
 * not settle fails the command, saying that running it again finishes the work.
 */
export async function settleInside(
  recorder: SessionRecorder,
  attempt: AttemptView,
  reason: string,
): Promise<SettledRun[]> {
  if (attempt.kind !== "tool") return [];
  try {
    return await settleCallsInside({ recorder, call: attempt, ended: { abandoned: reason } });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CliError({
      code: LedgerError.isInstance(error) ? error.code : "store-unavailable",
      message: `attempt ${attempt.attemptId} is abandoned, but the calls in flight inside it could not all be settled: ${why}`,
      exitCode: exitCodeOf(error),
      hint: "run the same command again to finish (the next resume of the agent does it too)",
      cause: error,
    });
  }
}

/** What `settleInside` did, a line per run, after a heading; nothing when it found nothing. */
export function settledLines(settled: readonly SettledRun[]): string {
  if (settled.length === 0) return "";
  const lines = ["and what it left in flight inside it:"];
  for (const run of settled) {
    const did: string[] = [];
    const calls = run.abandoned.map((call) => `${call.attemptId} (${attemptKind(call)})`);
    if (calls.length > 0)
      did.push(`abandoned attempt${calls.length === 1 ? "" : "s"} ${calls.join(", ")}`);
    did.push(run.closed ?? "closed meanwhile by another writer (a resume)");
    lines.push(terminalLine(`  run ${run.runId}: ${did.join("; ")}`));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * `resolve --abandon` of a call abandoned already: what the person asked for holds, so it is not
 * refused. A tool call's calls inside that were left in flight (a resolve that failed or was
 * killed part way, or one from before it settled them) are settled with the reason the call was
 * abandoned with. Returns what to print: with `json`, the abandonment event as the ledger holds
 * it; else the reason recorded (not the one given now, which is not written) and what was
 * settled, or that nothing it started is left in flight.
 */
export async function finishAbandonment(
  recorder: () => Promise<SessionRecorder>,
  attempt: AttemptView,
  json: boolean | undefined,
): Promise<string> {
  // Inspection gives an abandoned attempt's reason as its outcome.
  const recorded = attempt.outcome;
  const reason = typeof recorded === "string" ? recorded : JSON.stringify(recorded ?? null);
  const person = attempt.kind === "tool" ? await recorder() : undefined;
  const settled = person === undefined ? [] : await settleInside(person, attempt, reason);
  if (json) {
    const { store, sessionId, runId } = person ?? (await recorder());
    const event = (await readWholeRun(store, { sessionId, runId })).find(
      (candidate) =>
        candidate.type === "attempt.abandoned" && candidate.attemptId === attempt.attemptId,
    );
    return `${terminalJson(JSON.stringify(event, null, 2))}\n`;
  }
  const head = `attempt ${attempt.attemptId} (${attemptKind(attempt)}) on run ${attempt.runId} was abandoned already: ${reason}`;
  if (settled.length > 0) return `${terminalLine(head)}\n${settledLines(settled)}`;
  const nothing = attempt.kind === "tool" ? "; nothing it started is left in flight" : "";
  return `${terminalLine(`${head}${nothing}`)}\n`;
}
