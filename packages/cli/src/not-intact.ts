import { type RunView, runsInTreeOrder, type SeqGap } from "@agent-ledger/core";
import { terminalLine } from "./format.js";
import { type OutputStream, writeOut } from "./io.js";
import { notIntactText, type RenderInspectionOptions } from "./render-inspection.js";

/** A run whose seqs have a gap, with what `inspect` says of it (`notIntactText`). */
export interface NotIntactRun {
  runId: string;
  seqGap: SeqGap;
  text: string;
}

/** The runs of the tree whose seqs have a gap (`RunView.seqGap`), in tree order. */
export function notIntactRuns(
  runs: RunView[],
  sessionId: string,
  options: RenderInspectionOptions = {},
): NotIntactRun[] {
  return notIntactOf(
    Array.from(runsInTreeOrder(runs), ({ run }) => run),
    sessionId,
    options,
  );
}

/** Those of `runs` whose seqs have a gap, in the order given (export's: core's `SeqGaps.found`). */
export function notIntactOf(
  runs: Iterable<Pick<RunView, "runId" | "seqGap">>,
  sessionId: string,
  options: RenderInspectionOptions = {},
): NotIntactRun[] {
  const found: NotIntactRun[] = [];
  for (const run of runs) {
    const text = notIntactText(run, sessionId, options);
    if (run.seqGap !== undefined && text !== undefined)
      found.push({ runId: run.runId, seqGap: run.seqGap, text });
  }
  return found;
}

/**
 * Warns on stderr of each run not intact: what a command printed of it (`inspect --json`, an
 * `export`) is not what was recorded, while its output alone does not show it.
 */
export async function warnNotIntact(stderr: OutputStream, runs: NotIntactRun[]): Promise<void> {
  for (const run of runs)
    await writeOut(stderr, `agent-ledger: warning: ${terminalLine(run.text)}\n`);
}
