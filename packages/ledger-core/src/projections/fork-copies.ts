/**
 * Which attempts are a fork's copies. A fork copies a run's prefix with its attemptIds, so an
 * attemptId requested in a second run, after the run that requested it first (commit order),
 * is a copy there: its call was made once, in that first run, and its tokens were spent there.
 */
export class ForkCopies {
  readonly #firstRunOf = new Map<string, string>();

  /**
   * Notes a request of `attemptId` in `runId`, read in commit order. Answers the run it was
   * copied from when another run requested it first, else undefined.
   */
  requested(attemptId: string, runId: string): string | undefined {
    const first = this.#firstRunOf.get(attemptId);
    if (first === undefined) this.#firstRunOf.set(attemptId, runId);
    return first === undefined || first === runId ? undefined : first;
  }

  /** Whether the attempt `attemptId` of `runId` (its request noted already) is a copy. */
  isCopy(attemptId: string, runId: string): boolean {
    const first = this.#firstRunOf.get(attemptId);
    return first !== undefined && first !== runId;
  }
}
