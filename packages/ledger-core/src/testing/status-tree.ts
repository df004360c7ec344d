/** A run tree as an inspection gives it, or a view that keeps its runs' and attempts' statuses. */
export type StatusTreeRuns = readonly {
  runId: string;
  status: string;
  steps: readonly { attempts: readonly { attemptId: string; status: string }[] }[];
  children: StatusTreeRuns;
}[];

/**
 * Each run of a tree with its status, its attempts' statuses and its child runs, nothing else:
 * what a slimmer view of an inspection (the web viewer's) must say as the inspection does.
 */
export function statusTree(runs: StatusTreeRuns): unknown[] {
  return runs.map((run) => [
    run.runId,
    run.status,
    run.steps.map((step) => step.attempts.map((attempt) => [attempt.attemptId, attempt.status])),
    statusTree(run.children),
  ]);
}
