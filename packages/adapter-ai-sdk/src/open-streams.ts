import type { Attempt } from "@agent-ledger/core";

/**
 * How long a stream may go without being read (no part asked for, none being read from the
 * provider) and still count as being read: between two parts its reader is busy only for a
 * moment. A stream left unread, or whose reader stopped, is idle longer.
 */
export const READ_IDLE_MS = 100;

interface OpenStream {
  /** What the call is (a text stream, an object stream as `streamObject` makes). */
  kind: string;
  /** Records it as failed with what had streamed, or waits for its outcome being recorded. */
  abandon: (reason: string) => Promise<void>;
  /** Resolves once its outcome is recorded (or could not be). */
  settled: Promise<unknown>;
  /** A part was asked for and has not been passed on yet. */
  pulling: boolean;
  /** When the last part was passed on (or the stream handed out). */
  readAt: number;
}

/**
 * The streams of a run handed to their consumer whose outcome is not recorded yet, and whether
 * each is being read. The SDK's `streamText` reads a model stream to its end even when its
 * consumer stops (a `break` out of `fullStream`): such a stream is recorded once the SDK has
 * drained it, and a call that starts meanwhile waits for that (`claimAgentCall`).
 */
export class OpenStreams {
  readonly #streams = new Map<Attempt, OpenStream>();

  opened(
    attempt: Attempt,
    stream: { kind: string; abandon: OpenStream["abandon"]; settled: Promise<unknown> },
  ): void {
    this.#streams.set(attempt, { ...stream, pulling: false, readAt: Date.now() });
    void stream.settled.finally(() => this.#streams.delete(attempt));
  }

  /** What the open stream of `attempt` is, if it is one. */
  kindOf(attempt: Attempt): string | undefined {
    return this.#streams.get(attempt)?.kind;
  }

  /** Its consumer asked for a part. */
  pulled(attempt: Attempt): void {
    const stream = this.#streams.get(attempt);
    if (stream) stream.pulling = true;
  }

  /** A part was passed on to its consumer. */
  passedOn(attempt: Attempt): void {
    const stream = this.#streams.get(attempt);
    if (!stream) return;
    stream.pulling = false;
    stream.readAt = Date.now();
  }

  /**
   * The outcome of the open stream of `attempt`, if it is being read (a part asked for, or one
   * passed on less than `READ_IDLE_MS` ago); `undefined` for a stream left unread or idle.
   */
  beingRead(attempt: Attempt): Promise<unknown> | undefined {
    const stream = this.#streams.get(attempt);
    if (!stream) return undefined;
    if (!stream.pulling && Date.now() - stream.readAt >= READ_IDLE_MS) return undefined;
    return stream.settled;
  }

  /**
   * Resolves once no open stream is being read (each one read on has its outcome recorded), or
   * after `maxMs`. A stream left unread is not waited for: nothing would read it on.
   */
  async readOn(maxMs: number): Promise<void> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      const reads = this.attempts.flatMap((attempt) => this.beingRead(attempt) ?? []);
      const left = deadline - Date.now();
      if (reads.length === 0 || left <= 0) return;
      await settledOrAfter(Promise.allSettled(reads), Math.min(READ_IDLE_MS, left));
    }
  }

  /** The attempts of the streams still open. */
  get attempts(): Attempt[] {
    return [...this.#streams.keys()];
  }

  /** Resolves once every stream open now, and those opened meanwhile, has its outcome recorded. */
  async settled(): Promise<void> {
    while (this.#streams.size > 0)
      await Promise.all([...this.#streams.values()].map((stream) => stream.settled));
  }

  /** See `AdapterState.abandonOpenStreams`. */
  async abandonAll(reason: string): Promise<void> {
    await Promise.all([...this.#streams.values()].map((stream) => stream.abandon(reason)));
  }
}

/**
 * Resolves once `read` settles (fulfilled or rejected: never rejects), `ms` pass, or
 * `abortSignal` aborts, whichever comes first: one look of a bounded wait for a stream.
 */
export async function settledOrAfter(
  read: Promise<unknown>,
  ms: number,
  abortSignal?: AbortSignal,
): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      read.then(
        () => undefined,
        () => undefined,
      ),
      new Promise((resolve) => {
        timer = setTimeout(resolve, ms);
        onAbort = () => resolve(undefined);
        abortSignal?.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) abortSignal?.removeEventListener("abort", onAbort);
  }
}
