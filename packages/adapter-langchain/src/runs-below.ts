import type { EventStore, RunSummary } from "@agent-ledger/core";

/**
 * The runs under `runId` in its session, at any depth (its child runs, theirs, ...), read with one
 * `listRuns`: level by level, each level in the store's order.
 */
export async function runsBelow(
  store: EventStore,
  sessionId: string,
  runId: string,
): Promise<RunSummary[]> {
  const byParent = new Map<string, RunSummary[]>();
  for (const run of await store.listRuns(sessionId)) {
    if (run.parentRunId === undefined) continue;
    const siblings = byParent.get(run.parentRunId);
    if (siblings) siblings.push(run);
    else byParent.set(run.parentRunId, [run]);
  }
  const below: RunSummary[] = [];
  for (let next = [runId]; next.length > 0; ) {
    const children = next.flatMap((parent) => byParent.get(parent) ?? []);
    below.push(...children);
    next = children.map((run) => run.runId);
  }
  return below;
}
