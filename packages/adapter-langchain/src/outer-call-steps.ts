import { type RecordedAttempt, readWholeRun, type SessionRecorder } from "@agent-ledger/core";

/**
 * The step of each tool call a resumed run recorded, by the eventId of its attempts'
 * `tool.requested`: what a call made inside another tool (a nested call) is matched by on
 * resume. A nested call is caused by the request of the outer call's attempt it ran in; run
 * again after a crash, the outer call is a new attempt of the same step (`retryOf`), so the
 * nested calls recorded inside it are those caused by a request of an attempt of that step.
 * Matched by name and order across the whole run instead, the checkout of one thread (or of a
 * later turn) met the charge that another thread's (an earlier turn's) checkout made: refused
 * as already done where it never ran, and that charge then ran again for its own checkout.
 *
 * Read once per handler, when the first nested call of a resumed run comes while the run still
 * has recorded calls to match: the replay cursor does not list the attempts it already retired
 * (an attempt in flight at a crash that a later process retried), and the nested calls recorded
 * inside those belong to the outer call too.
 */
export class OuterCallSteps {
  #steps: Promise<Map<string, string>> | undefined;

  /**
   * Accepts the recorded attempts made inside an attempt of the tool call of step `stepId`;
   * undefined when nothing recorded is left to match (a new run, or a resumed one past its
   * recorded calls).
   */
  async madeInside(
    recorder: SessionRecorder,
    stepId: string,
  ): Promise<((recorded: RecordedAttempt) => boolean) | undefined> {
    const replay = recorder.replay;
    if (!replay || replay.atFrontier) return undefined;
    if (!this.#steps) {
      this.#steps = readSteps(recorder);
      this.#steps.catch(() => {
        this.#steps = undefined;
      });
    }
    const steps = await this.#steps;
    return (recorded) => {
      const cause = recorded.requested.causedByEventId;
      return cause !== undefined && steps.get(cause) === stepId;
    };
  }
}

/** eventId of each `tool.requested` of the recorder's run -> its step. */
async function readSteps(recorder: SessionRecorder): Promise<Map<string, string>> {
  const events = await readWholeRun(recorder.store, {
    sessionId: recorder.sessionId,
    runId: recorder.runId,
  });
  const steps = new Map<string, string>();
  for (const event of events)
    if (event.type === "tool.requested" && event.stepId !== undefined)
      steps.set(event.eventId, event.stepId);
  return steps;
}
