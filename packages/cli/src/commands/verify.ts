import {
  type EventStore,
  stopBeforeNextPage,
  unreadableRunResult,
  type VerifyResult,
  verifyRun,
} from "@agent-ledger/core";
import { EXIT_CODES, notFoundError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import { sessionRunIds } from "../session-run-ids.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const verifyHelp = `agent-ledger verify <session> [--json]
  Recomputes every run's hash chain and reads every blob its events name. Exit code 1 and the
  first bad seq when an event was changed, removed or reordered, or when a blob an event names
  is missing or does not hash to its reference (then the blob's ref and the seq of the first
  event that names it; --json: \`blob: { ref, problem }\`). On SQLite it also runs SQLite's
  own check of the whole file (PRAGMA quick_check, time linear in the file's size): a damaged
  index reads as an intact but shorter run, and a resume would make its last calls again
  (exit 1, DAMAGED; --json: \`file: { ok, problems }\`). Limit: on SQLite, events removed
  from the END of a run that is still open cannot be seen (its head is written when it
  closes): the run reads like one whose writer stopped early. Each run's line is printed as
  it is checked (--json: all at the end). Ctrl-C stops it between runs and between pages of a
  run (exit 130), saying on stderr how far it got: the session's result is then not known,
  and no verdict on it is printed (--json: nothing).`;

export async function verifyCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "verify");
  const store = await context.openStore();
  const runIds = await runIdsToVerify(store, sessionId);
  if (runIds.length === 0) throw notFoundError(`unknown session ${JSON.stringify(sessionId)}`);
  const { signal, stdout, stderr } = context.io;
  const results: (VerifyResult & { runId: string })[] = [];
  // Said on stderr at Ctrl-C, `where` after the runs checked whole.
  const verifyInterrupted = (where: string) => {
    const failing = results.filter((result) => !result.ok).length;
    // Ids may hold terminal controls: shown escaped, as in the lines on stdout.
    return interrupted(
      stderr,
      "verify",
      terminalLine(
        `after checking ${results.length} of ${runIds.length} run(s) of session ${sessionId}${where}: ${
          failing > 0
            ? `${failing} of them fail verification${json ? "" : " (above)"}; the other runs were not checked`
            : "the session's result is not known"
        }`,
      ),
    );
  };
  for (const runId of runIds) {
    // A run with an event that cannot be read fails at its seq (verifyRun reads it with
    // readRun). Ctrl-C: verifyRun stops before its next page (after a turn of the event loop,
    // for the signal to be seen on SQLite), never answering ok for a run it did not finish.
    const result = await verifyRun(store, { sessionId, runId }, signal ? { signal } : {});
    if (result.stopped)
      return verifyInterrupted(
        result.length > 0 ? ` and the first ${result.length} event(s) of run ${runId}` : "",
      );
    results.push({ runId, ...result });
    // Each run's line as it is checked: a session of many runs shows its progress.
    if (!json) await writeOut(stdout, `${terminalLine(runLine({ runId, ...result }))}\n`);
  }
  // SQLite's check of the whole file is one statement, which nothing stops once it has begun.
  const check = fileCheck(store);
  if (check !== undefined && (await stopBeforeNextPage(signal)))
    return verifyInterrupted(", before SQLite's check of the file");
  const bad = results.filter((result) => !result.ok);
  const problems = await check?.();
  const sound = bad.length === 0 && (problems === undefined || problems.length === 0);
  if (json) {
    const file = problems === undefined ? {} : { file: { ok: problems.length === 0, problems } };
    await writeOut(
      stdout,
      `${terminalJson(JSON.stringify({ sessionId, ok: sound, runs: results, ...file }, null, 2))}\n`,
    );
  } else {
    const lines: string[] = [];
    if (problems !== undefined && problems.length > 0)
      lines.push(
        `DAMAGED   the SQLite file (${problems.length} problem(s), first: ${problems[0]}): its indexes may hide events; restore it from a backup, or recover what is readable (sqlite3 <file> ".recover" | sqlite3 <new file>), before anyone resumes from it`,
      );
    lines.push(
      bad.length > 0
        ? `session ${sessionId}: ${bad.length} of ${results.length} run(s) fail verification`
        : sound
          ? `session ${sessionId}: ${results.length} run(s) intact`
          : `session ${sessionId}: ${results.length} run(s) verify as read, but the file they are read from is damaged`,
    );
    // Ids may hold terminal controls (bidi overrides): shown escaped, as the other commands do.
    await writeOut(stdout, `${lines.map(terminalLine).join("\n")}\n`);
  }
  return sound ? EXIT_CODES.ok : EXIT_CODES.failure;
}

function runLine(result: VerifyResult & { runId: string }): string {
  return result.ok
    ? `ok        run ${result.runId}  ${result.length} events`
    : `TAMPERED  run ${result.runId}  bad seq ${result.badSeq}: ${result.reason}`;
}

/** A store's own check of its file (SQLite: the problems it finds), or undefined for a store without one. */
function fileCheck(store: EventStore): (() => Promise<string[]>) | undefined {
  const check = (store as { fileProblems?: () => Promise<string[]> }).fileProblems;
  return typeof check === "function" ? () => check.call(store) : undefined;
}

/**
 * The session's runs, in listRuns' order. A run whose last stored event is no longer an event
 * has no head to list (on SQLite an open run's head is its last event), and listRuns fails for
 * the whole session: then the runs are the ones the session's readable events name, plus the
 * run that error names (in case none of its events can be read), so every run is still
 * verified and reported, that one failing at its seq.
 */
async function runIdsToVerify(store: EventStore, sessionId: string): Promise<string[]> {
  try {
    return (await store.listRuns(sessionId)).map((run) => run.runId);
  } catch (error) {
    const unreadable = unreadableRunResult(error);
    if (unreadable === undefined) throw error;
    const runIds = await sessionRunIds(store, sessionId);
    return runIds.includes(unreadable.runId) ? runIds : [...runIds, unreadable.runId];
  }
}
