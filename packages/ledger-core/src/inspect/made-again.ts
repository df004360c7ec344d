import type { AttemptView, RunView, SessionInspection } from "./inspection-views.js";
import { endedOuterCalls } from "./settled-with-outer.js";

/**
 * The field of a `run.started` payload with which an adapter says that the run records every
 * call its agent makes, each before it is made (`true`): every tool its agent can call is a
 * recorded one, and nothing the agent does goes around the ledger. See
 * `EFFECT_IN_CHILD_RUNS_FIELD`. Any framework may write it; only `true` counts.
 */
export const RECORDS_EVERY_CALL_FIELD = "recordsEveryCall";

/**
 * The field of a tool request's `metadata` with which an adapter says that the call has no
 * effect of its own: what it does is done by the calls its child runs record (an agent used as
 * a tool; `true`). Its declared `effect.idempotent` then holds only as far as those runs show
 * it: in flight, the call is made again by itself only when it has a child run and each of its
 * child runs records every call (`RECORDS_EVERY_CALL_FIELD`); otherwise what its agent did may
 * have gone unseen, and a person decides. Any framework may write it; only `true` counts.
 */
export const EFFECT_IN_CHILD_RUNS_FIELD = "effectInChildRuns";

/**
 * The field of a tool request's `metadata` with which an adapter says that the call is a handoff
 * to another agent (the target agent's name, a string): the model gets no result of it, so a
 * person's abandonment reason is kept in the ledger and never read by the model, and an
 * abandoned handoff goes ahead without its callback. Any framework may write it.
 */
export const HANDOFF_TO_FIELD = "handoffTo";

/**
 * The type of an event (its `attemptId` naming an unresolved tool attempt of its run) with which
 * an adapter says that its refusal of that call, on a resume, was handed to the agent as the
 * call's result and saved in the agent's state (a tool node that turns errors into results, and
 * a checkpoint after it): the step that would make the call is over, so no resume makes it
 * again, even approved. A person abandons it, and replaces that saved result (the adapter says
 * how). Any framework may write it; the payload is the adapter's.
 */
export const REFUSAL_SAVED_TYPE = "x.agent-ledger.refusal-saved";

type Inspected = Pick<SessionInspection, "runs" | "unresolved">;

// A run's child runs by the request event that caused each, and each step by run and stepId.
function indexRuns(runs: readonly RunView[]) {
  const childrenByCause = new Map<string, RunView[]>();
  const steps = new Map<string, AttemptView[]>();
  const pending = [...runs];
  for (let run = pending.pop(); run !== undefined; run = pending.pop()) {
    for (const step of run.steps) steps.set(`${run.runId}\n${step.stepId}`, step.attempts);
    for (const child of run.children) {
      pending.push(child);
      if (child.causedByEventId === undefined) continue;
      const key = `${run.runId}\n${child.causedByEventId}`;
      const caused = childrenByCause.get(key);
      if (caused) caused.push(child);
      else childrenByCause.set(key, [child]);
    }
  }
  return { childrenByCause, steps };
}

/**
 * Whether the next resume makes each of `inspection.unresolved` (same order) again by itself,
 * without a person deciding: a model call (model calls count as idempotent), a call a person
 * approved for a re-run, or a tool call declared idempotent; never a call whose refusal the
 * agent saved as its result (`REFUSAL_SAVED_TYPE`), approved or not. A call whose effect is that of its
 * child runs (`EFFECT_IN_CHILD_RUNS_FIELD`) only when it has child runs and each records every
 * call (`RECORDS_EVERY_CALL_FIELD`): the child runs of all its attempts count, since a retry
 * goes on on the run its first attempt started. The rule inspection and adapters' resumes
 * share, so what `agent-ledger inspect` says of a call is what the resume does with it.
 *
 * A call in flight inside a tool call that ended (`endedOuterCalls`) is never made again,
 * whatever it is and even approved: settling that call abandons it.
 */
export function madeAgainByItself(inspection: Inspected): boolean[] {
  let index: ReturnType<typeof indexRuns> | undefined;
  const held = endedOuterCalls(inspection);
  return inspection.unresolved.map((attempt, position) => {
    if (held[position] !== undefined || attempt.refusalSaved === true) return false;
    if (attempt.kind === "model" || attempt.approvedAt !== undefined) return true;
    const effect = attempt.effect as { idempotent?: unknown } | undefined;
    if (effect?.idempotent !== true) return false;
    if (attempt.effectInChildRuns !== true) return true;
    index ??= indexRuns(inspection.runs);
    const { childrenByCause, steps } = index;
    const attempts = steps.get(`${attempt.runId}\n${attempt.stepId}`) ?? [attempt];
    const children = attempts.flatMap(
      (each) => childrenByCause.get(`${attempt.runId}\n${each.requestEventId}`) ?? [],
    );
    return children.length > 0 && children.every((child) => child.recordsEveryCall === true);
  });
}
