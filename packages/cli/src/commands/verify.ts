import { unreadableRunResult, type VerifyResult, verifyRun } from "@agent-ledger/core";
import { EXIT_CODES, notFoundError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const verifyHelp = `agent-ledger verify <session> [--json]
  Recomputes every run's hash chain. Exit code 1 and the first bad seq when an event was
  changed, removed or reordered. Limit: on SQLite, events removed from the END of a run that
  is still open cannot be seen (its head is written when it closes): the run reads like one
  whose writer stopped early.`;

export async function verifyCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "verify");
  const store = await context.openStore();
  const results: (VerifyResult & { runId: string })[] = [];
  try {
    const runs = await store.listRuns(sessionId);
    if (runs.length === 0) throw notFoundError(`unknown session ${JSON.stringify(sessionId)}`);
    for (const run of runs)
      results.push({
        runId: run.runId,
        ...(await verifyRun(store, { sessionId, runId: run.runId })),
      });
  } catch (error) {
    // A run whose last stored event is no longer an event has no head to list (an open run's
    // head is its last event): that run fails verification there, which is the answer.
    const unreadable = unreadableRunResult(error);
    if (unreadable === undefined) throw error;
    results.push(unreadable);
  }
  const bad = results.filter((result) => !result.ok);
  if (json) {
    await writeOut(
      context.io.stdout,
      `${terminalJson(JSON.stringify({ sessionId, ok: bad.length === 0, runs: results }, null, 2))}\n`,
    );
  } else {
    const lines = results.map((result) =>
      result.ok
        ? `ok        run ${result.runId}  ${result.length} events`
        : `TAMPERED  run ${result.runId}  bad seq ${result.badSeq}: ${result.reason}`,
    );
    lines.push(
      bad.length === 0
        ? `session ${sessionId}: ${results.length} run(s) intact`
        : `session ${sessionId}: ${bad.length} of ${results.length} run(s) fail verification`,
    );
    // Ids may hold terminal controls (bidi overrides): shown escaped, as the other commands do.
    await writeOut(context.io.stdout, `${lines.map(terminalLine).join("\n")}\n`);
  }
  return bad.length === 0 ? EXIT_CODES.ok : EXIT_CODES.failure;
}
