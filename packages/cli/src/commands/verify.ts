import { type VerifyResult, verifyRun } from "@agent-ledger/core";
import { EXIT_CODES, notFoundError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import type { CommandContext } from "./context.js";
import { sessionArgs } from "./session-args.js";

export const verifyHelp = `agent-ledger verify <session> [--json]
  Recomputes every run's hash chain. Exit code 1 and the first bad seq when an event was
  changed, removed or reordered.`;

export async function verifyCommand(context: CommandContext): Promise<number> {
  const { sessionId, json } = sessionArgs(context, "verify");
  const store = await context.openStore();
  const runs = await store.listRuns(sessionId);
  if (runs.length === 0) throw notFoundError(`unknown session ${JSON.stringify(sessionId)}`);
  const results: (VerifyResult & { runId: string })[] = [];
  for (const run of runs)
    results.push({
      runId: run.runId,
      ...(await verifyRun(store, { sessionId, runId: run.runId })),
    });
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
