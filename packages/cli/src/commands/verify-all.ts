import { type EventStore, stopBeforeNextPage } from "@agent-ledger/core";
import { EXIT_CODES } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { type CliIo, interrupted, writeOut } from "../io.js";
import { sessionPages } from "../store.js";
import {
  damagedLine,
  fileProblems,
  type RunResult,
  runIdsToVerify,
  runLine,
  sessionGone,
  verifySession,
} from "./verify-session.js";

/** A session's entry in `verify --all --json`: the failing runs' results, not the others'. */
interface SessionReport {
  sessionId: string;
  ok: boolean;
  /** Deleted while verify ran (listed, then gone): not checked, and no failure. */
  gone?: true;
  runs: number;
  failing: RunResult[];
}

/**
 * `verify --all`: every session of the store, as `sessions` lists them, each verified as
 * `verify <session>` does (verifySession), then the store's check of its file once. Text: a
 * line per session as it is checked, a failing session's TAMPERED lines under it as they are
 * found. A ledger of many sessions keeps only the failing runs' results (and, for --json, a
 * small entry per session).
 */
export async function verifyAll(store: EventStore, io: CliIo, json: boolean): Promise<number> {
  const { signal, stdout, stderr } = io;
  const reports: SessionReport[] = [];
  let sessions = 0;
  let runs = 0;
  let failingRuns = 0;
  let failingSessions = 0;
  let gone = 0;
  const print = async (line: string) => {
    if (!json) await writeOut(stdout, `${terminalLine(line)}\n`);
  };
  // A session listed, then deleted before or while it was checked (prune in another process).
  const goneSession = async (sessionId: string) => {
    gone += 1;
    await print(`gone    session ${sessionId}  deleted while verify ran: not checked`);
    if (json) reports.push({ sessionId, ok: true, gone: true, runs: 0, failing: [] });
  };
  // Said on stderr at Ctrl-C, `where` after the sessions checked whole; `more` when some of
  // the sessions were not begun.
  const verifyInterrupted = (where: string, more: boolean) =>
    interrupted(
      stderr,
      "verify",
      // Ids may hold terminal controls: shown escaped, as in the lines on stdout.
      terminalLine(
        `after checking ${sessions} session(s) (${runs} run(s))${where}: ${
          failingRuns > 0
            ? `${failingRuns} run(s) in ${failingSessions} session(s) fail verification${json ? "" : " (above)"}${more ? "; the other sessions were not checked" : ""}`
            : "the ledger's result is not known"
        }`,
      ),
    );
  for await (const page of sessionPages(store))
    for (const { sessionId } of page) {
      if (await stopBeforeNextPage(signal)) return verifyInterrupted("", true);
      const runIds = await runIdsToVerify(store, sessionId);
      // A listed session with no runs now was deleted since (prune in another process).
      if (runIds.length === 0 && (await sessionGone(store, sessionId))) {
        await goneSession(sessionId);
        continue;
      }
      let failingHere = 0;
      const check = await verifySession(store, sessionId, runIds, signal, async (result) => {
        if (result.ok) return;
        // The session's line comes with its first failing run: what is wrong shows at once.
        if (failingHere === 0) await print(`FAILED  session ${sessionId}`);
        failingHere += 1;
        failingRuns += 1;
        await print(`  ${runLine(result)}`);
      });
      if (check.gone) {
        // Its runs failed as deleting reads: the failures it printed are not counted.
        failingRuns -= failingHere;
        await goneSession(sessionId);
        continue;
      }
      if (failingHere > 0) failingSessions += 1;
      if (check.stopped) {
        const { runId, length } = check.stopped;
        return verifyInterrupted(
          ` and ${check.checked} of ${runIds.length} run(s) of session ${sessionId}${
            length > 0 ? ` and the first ${length} event(s) of run ${runId}` : ""
          }`,
          true,
        );
      }
      sessions += 1;
      runs += runIds.length;
      if (failingHere === 0) await print(`ok      session ${sessionId}  ${runIds.length} run(s)`);
      if (json)
        reports.push({
          sessionId,
          ok: failingHere === 0,
          runs: runIds.length,
          failing: check.failing,
        });
    }
  const problems = await fileProblems(store, signal);
  if (problems === "stopped")
    return verifyInterrupted(", during SQLite's check of the file", false);
  const damaged = problems !== undefined && problems.length > 0;
  const sound = failingRuns === 0 && !damaged;
  if (json) {
    const file = problems === undefined ? {} : { file: { ok: !damaged, problems } };
    await writeOut(
      stdout,
      `${terminalJson(JSON.stringify({ ok: sound, sessions: reports, ...file }, null, 2))}\n`,
    );
  } else {
    if (damaged) await print(damagedLine(problems));
    const counted = `${sessions} session(s), ${runs} run(s)`;
    const deleted = gone > 0 ? ` (${gone} session(s) deleted while verify ran)` : "";
    await print(
      failingRuns > 0
        ? `${counted}: ${failingRuns} run(s) in ${failingSessions} session(s) fail verification${deleted}`
        : sound
          ? `${counted}: all intact${deleted}`
          : `${counted} verify as read, but the file they are read from is damaged${deleted}`,
    );
  }
  return sound ? EXIT_CODES.ok : EXIT_CODES.failure;
}
