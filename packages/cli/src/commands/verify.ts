import type { EventStore } from "@agent-ledger/core";
import { EXIT_CODES, notFoundError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { type CliIo, interrupted, writeOut } from "../io.js";
import { deletedWhileRead } from "../store.js";
import type { CommandContext } from "./context.js";
import { sessionOrAllArgs } from "./session-args.js";
import { verifyAll } from "./verify-all.js";
import {
  damagedLine,
  fileProblems,
  type RunResult,
  runIdsToVerify,
  runLine,
  type SessionCheck,
  verifySession,
} from "./verify-session.js";

export const verifyHelp = `agent-ledger verify <session> [--json]
agent-ledger verify --all [--json]
  Recomputes every run's hash chain and reads every blob its events name. Exit code 1 and the
  first bad seq when an event was changed, removed or reordered, or when a blob an event names
  is missing or does not hash to its reference (then the blob's ref and the seq of the first
  event that names it; --json: \`blob: { ref, problem }\`). On SQLite it also runs SQLite's
  own check of the whole file (PRAGMA quick_check, time linear in the file's size): a damaged
  index reads as an intact but shorter run, and a resume would make its last calls again
  (exit 1, DAMAGED; --json: \`file: { ok, problems }\`). Limit: on SQLite, events removed
  from the END of a run that is still open cannot be seen (its head is written when it
  closes): the run reads like one whose writer stopped early. Each run's line is printed as
  it is checked (--json: all at the end).
  --all: every session of the store, a line each as it is checked (ok with its runs, or
  FAILED with its failing runs' lines under it), SQLite's check of the file once at the end,
  then a line for the whole ledger; exit 1 if a run fails or the file is damaged, 0 when all
  is intact (no sessions too). --json: one document at the end, \`{ ok, sessions, file }\`,
  a session \`{ sessionId, ok, runs, failing }\` (runs: how many; failing: the failing runs'
  results only). A session deleted while verify runs (prune in another process) is \`gone\`
  (--json: \`gone: true\`), not checked and no failure; \`verify <session>\` then exits 3.
  Ctrl-C stops it between sessions, between runs, between pages of a run and during SQLite's
  check of the file (exit 130), saying on stderr how far it got and which runs fail so far:
  the result is then not known, and no verdict is printed (--json: nothing).`;

export async function verifyCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionOrAllArgs(context, "verify", { all: true });
  const store = await context.openStore();
  return sessionId === undefined
    ? verifyAll(store, context.io, json)
    : verifyOne(store, context.io, sessionId, json);
}

async function verifyOne(
  store: EventStore,
  io: CliIo,
  sessionId: string,
  json: boolean,
): Promise<number> {
  const runIds = await runIdsToVerify(store, sessionId);
  if (runIds.length === 0) throw notFoundError(`unknown session ${JSON.stringify(sessionId)}`);
  const { signal, stdout, stderr } = io;
  const results: RunResult[] = [];
  // Said on stderr at Ctrl-C, `where` after the runs `check` checked whole.
  const verifyInterrupted = (check: SessionCheck, where: string) => {
    const failing = check.failing.length;
    const rest = check.checked < runIds.length ? "; the other runs were not checked" : "";
    // Ids may hold terminal controls: shown escaped, as in the lines on stdout.
    return interrupted(
      stderr,
      "verify",
      terminalLine(
        `after checking ${check.checked} of ${runIds.length} run(s) of session ${sessionId}${where}: ${
          failing > 0
            ? `${failing} of them fail verification${json ? "" : " (above)"}${rest}`
            : "the session's result is not known"
        }`,
      ),
    );
  };
  const check = await verifySession(store, sessionId, runIds, signal, async (result) => {
    results.push(result);
    // Each run's line as it is checked: a session of many runs shows its progress.
    if (!json) await writeOut(stdout, `${terminalLine(runLine(result))}\n`);
  });
  // Deleted by another process while it was verified: not found now, and nothing tampered.
  if (check.gone)
    throw deletedWhileRead(
      sessionId,
      "verify",
      `${check.checked} of ${runIds.length} run(s) checked before it was`,
    );
  if (check.stopped)
    return verifyInterrupted(
      check,
      check.stopped.length > 0
        ? ` and the first ${check.stopped.length} event(s) of run ${check.stopped.runId}`
        : "",
    );
  const problems = await fileProblems(store, signal);
  if (problems === "stopped")
    return verifyInterrupted(check, ", during SQLite's check of the file");
  const bad = check.failing;
  const sound = bad.length === 0 && (problems === undefined || problems.length === 0);
  if (json) {
    const file = problems === undefined ? {} : { file: { ok: problems.length === 0, problems } };
    await writeOut(
      stdout,
      `${terminalJson(JSON.stringify({ sessionId, ok: sound, runs: results, ...file }, null, 2))}\n`,
    );
  } else {
    const lines: string[] = [];
    if (problems !== undefined && problems.length > 0) lines.push(damagedLine(problems));
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
