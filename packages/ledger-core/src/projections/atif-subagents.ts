import type { DraftStep } from "./atif-draft-steps.js";
import type { AtifSubagentRef } from "./atif-types.js";
import type { RunRecord, SessionModel } from "./session-model.js";

// How an ATIF trajectory shows its run's child runs: each referenced (by `trajectory_id`, the
// child's runId) from the step that caused it; `toAtif` embeds their trajectories.

/** The last of `drafts` (ascending `at`) with `at <= at`, if any. */
function lastAtOrBefore(drafts: DraftStep[], at: number): DraftStep | undefined {
  let low = 0;
  let high = drafts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((drafts[middle] as DraftStep).at <= at) low = middle + 1;
    else high = middle;
  }
  return drafts[low - 1];
}

/** What `referenceSubagents` reads: a run, and the steps of its trajectory made so far. */
export interface ReferenceSubagentsOptions {
  model: SessionModel;
  run: RunRecord;
  /** The run's steps, to which a step is added for a child no step of the run came before. */
  drafts: DraftStep[];
}

/**
 * References each child run of `run` from the step that caused it, else from the last agent
 * step at or before its start, else from a step of its own.
 */
export function referenceSubagents(options: ReferenceSubagentsOptions): void {
  const { model, run, drafts } = options;
  // The steps are indexed by the events they answer, and the agent steps kept in commit order,
  // so each child is placed by a lookup: a scan of every step per child was quadratic (5,000
  // sub-agents: 3 s).
  const draftByCause = new Map<string, DraftStep>();
  const agentDrafts: DraftStep[] = [];
  for (const draft of drafts) {
    for (const cause of draft.causes) if (!draftByCause.has(cause)) draftByCause.set(cause, draft);
    if (draft.step.source === "agent") agentDrafts.push(draft);
  }
  const stepsBeforeChildren = drafts.length;
  for (const child of run.children) {
    const ref: AtifSubagentRef = { trajectory_id: child.runId, session_id: model.sessionId };
    const cause = child.causedByEventId;
    let draft = cause ? draftByCause.get(cause) : undefined;
    const startedAt = child.started?.commitCursor ?? child.events[0]?.commitCursor ?? 0;
    // Else the last agent step at or before the child's start: among the steps made for earlier
    // children (the latest made first), then among the run's own, by binary search.
    for (let index = drafts.length - 1; !draft && index >= stepsBeforeChildren; index--) {
      const candidate = drafts[index] as DraftStep;
      if (candidate.at <= startedAt) draft = candidate;
    }
    if (!draft) draft = lastAtOrBefore(agentDrafts, startedAt);
    if (!draft) {
      draft = {
        at: startedAt,
        step: {
          timestamp: child.started?.recordedAt ?? child.events[0]?.recordedAt ?? "",
          source: "agent",
          message: `started sub-agent ${child.started?.actor?.id ?? child.runId}`,
          llm_call_count: 0,
        },
        causes: [],
        resultsByCause: new Map(),
      };
      drafts.push(draft);
    }
    const existing = cause ? draft.resultsByCause.get(cause) : undefined;
    if (existing) {
      if (existing.subagent_trajectory_ref) existing.subagent_trajectory_ref.push(ref);
      else existing.subagent_trajectory_ref = [ref];
    } else {
      const observation = draft.step.observation ?? { results: [] };
      observation.results.push({ content: null, subagent_trajectory_ref: [ref] });
      draft.step.observation = observation;
    }
  }
}
