/**
 * Recorded attempts grouped by a key (a toolCallId, a tool name, a retried attemptId), each
 * group in recorded order, answering the first attempt of a group not yet used. A group moves
 * past its used attempts once, so matching every attempt of a run costs time linear in the
 * run: a scan of all the run's tool attempts per call made resuming a run of 25,000 tool calls
 * spend 6 s matching them (quadratic), where 2,500 took 0.1 s.
 */
export class AttemptIndex<T> {
  readonly #groups = new Map<string, { items: T[]; next: number }>();

  constructor(items: readonly T[], keyOf: (item: T) => string | undefined) {
    for (const item of items) {
      const key = keyOf(item);
      if (key === undefined) continue;
      const group = this.#groups.get(key);
      if (group === undefined) this.#groups.set(key, { items: [item], next: 0 });
      else group.items.push(item);
    }
  }

  /**
   * The first item under `key` that `used` does not hold (and, given `accepts`, that it accepts:
   * those it passes over stay for a later call).
   */
  firstUnused(key: string, used: ReadonlySet<T>, accepts?: (item: T) => boolean): T | undefined {
    const group = this.#unusedFrom(key, used);
    if (group === undefined) return undefined;
    if (accepts === undefined) return group.items[group.next];
    for (let index = group.next; index < group.items.length; index++) {
      const item = group.items[index] as T;
      if (!used.has(item) && accepts(item)) return item;
    }
    return undefined;
  }

  /** Every item under `key` that `used` does not hold, in recorded order (a new array). */
  unused(key: string, used: ReadonlySet<T>): T[] {
    const group = this.#unusedFrom(key, used);
    if (group === undefined) return [];
    return group.items.slice(group.next).filter((item) => !used.has(item));
  }

  /** The group under `key`, moved past the used items it starts with (until `reopen`). */
  #unusedFrom(key: string, used: ReadonlySet<T>): { items: T[]; next: number } | undefined {
    const group = this.#groups.get(key);
    if (group === undefined) return undefined;
    while (group.next < group.items.length && used.has(group.items[group.next] as T)) group.next++;
    return group;
  }

  /**
   * Makes `item` (under `key`) one `firstUnused` may answer again once `used` no longer holds it:
   * a match given back because its call was not recorded (ReplayCursor.giveBack). A search of
   * the group, made only then.
   */
  reopen(key: string | undefined, item: T): void {
    const group = key === undefined ? undefined : this.#groups.get(key);
    if (group === undefined) return;
    const index = group.items.indexOf(item);
    if (index >= 0 && index < group.next) group.next = index;
  }

  /** Every item under `key`, used or not, in recorded order (empty for an unknown key). */
  all(key: string): readonly T[] {
    return this.#groups.get(key)?.items ?? [];
  }
}
