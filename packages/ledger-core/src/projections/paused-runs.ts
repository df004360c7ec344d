import { type AwaitingDecisionView, PausedRuns } from "../inspect/awaiting-decision.js";
import type { RunRecord, SessionModel } from "./session-model.js";

// Which runs of a session are paused at an approval, as inspection says it, for the projections.

interface PauseNode {
  runId: string;
  status: string;
  children: PauseNode[];
  awaitingDecision?: AwaitingDecisionView;
}

/** The pause of each run of the session paused until a person decides, by runId. */
export function pausesOf(model: SessionModel): Map<string, AwaitingDecisionView> {
  const paused = new PausedRuns();
  for (const event of model.events) paused.add(event);
  const nodes = new Map<RunRecord, PauseNode>();
  const nodeOf = (run: RunRecord): PauseNode => {
    let node = nodes.get(run);
    if (!node) {
      node = {
        runId: run.runId,
        status: runStatus(run, false),
        children: [],
      };
      nodes.set(run, node);
    }
    return node;
  };
  for (const run of model.runs.values())
    nodeOf(run).children = run.children.map((child) => nodeOf(child));
  paused.mark(model.roots.map((root) => nodeOf(root)));
  const pauses = new Map<string, AwaitingDecisionView>();
  for (const node of nodes.values())
    if (node.awaitingDecision) pauses.set(node.runId, node.awaitingDecision);
  return pauses;
}

/**
 * A run's status as the projections say it: how it ended (`completed`, `failed`, `cancelled`),
 * else `paused` when it waits on a person's decision (`pausesOf`), else `running`.
 */
export function runStatus(run: RunRecord, paused: boolean): string {
  if (run.terminal) return run.terminal.type.slice(4);
  return paused ? "paused" : "running";
}
