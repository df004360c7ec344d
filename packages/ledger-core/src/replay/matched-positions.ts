/**
 * Which positions of the recorded model attempts a replay has matched (or skipped): every one
 * before `next`, and those after it matched out of order (by request, or with `accepts`).
 */
export class MatchedPositions {
  /** Every position before it is matched or skipped. */
  next = 0;
  /** Positions after `next` matched out of order. */
  readonly #ahead = new Set<number>();

  /** How many positions are matched or skipped. */
  get count(): number {
    return this.next + this.#ahead.size;
  }

  /** Whether `position` is matched or skipped. */
  has(position: number): boolean {
    return position < this.next || this.#ahead.has(position);
  }

  /** Matches `position` (one not matched yet). */
  take(position: number): void {
    if (position === this.next) {
      this.next++;
      this.#advance();
    } else this.#ahead.add(position);
  }

  /** Makes `position` (matched) not matched again; the others stay as they are. */
  untake(position: number): void {
    if (position >= this.next) {
      this.#ahead.delete(position);
      return;
    }
    // Those between it and `next` stay matched (or skipped): taken ahead of it now.
    for (let taken = position + 1; taken < this.next; taken++) this.#ahead.add(taken);
    this.next = position;
  }

  /** Moves past every position before `position` (at or after `next`), matched or not. */
  skipBefore(position: number): void {
    this.next = position;
    for (const taken of this.#ahead) if (taken < position) this.#ahead.delete(taken);
    this.#advance();
  }

  #advance(): void {
    while (this.#ahead.delete(this.next)) this.next++;
  }
}
