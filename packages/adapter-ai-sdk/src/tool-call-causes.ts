// Which model completion asked for each tool call: the tool's request names it as its cause,
// and a streamed call's tool waits until that completion is committed.

interface Deferred {
  promise: Promise<string>;
  resolve: (eventId: string) => void;
  reject: (error: unknown) => void;
  settled: boolean;
}

function deferred(): Deferred {
  const entry = { settled: false } as Deferred;
  entry.promise = new Promise<string>((onResolve, onReject) => {
    entry.resolve = (eventId) => {
      entry.settled = true;
      onResolve(eventId);
    };
    entry.reject = (error) => {
      entry.settled = true;
      onReject(error);
    };
  });
  // A model failure with no tool waiting for it must not become an unhandled rejection.
  entry.promise.catch(() => undefined);
  return entry;
}

/** The completion (its eventId) that asked for each tool call, by the call's toolCallId. */
export class ToolCallCauses {
  readonly #causes = new Map<string, Deferred>();

  // A settled entry belongs to an earlier response: some providers reuse tool call ids on
  // every step (call_0...), so a new response announcing the id starts a new entry.
  #cause(toolCallId: string): Deferred {
    let entry = this.#causes.get(toolCallId);
    if (!entry || entry.settled) {
      entry = deferred();
      this.#causes.set(toolCallId, entry);
    }
    return entry;
  }

  /** A streamed tool call arrived: its tool waits until the completion is committed. */
  expect(toolCallId: string): void {
    this.#cause(toolCallId);
  }

  resolve(toolCallIds: readonly string[], eventId: string): void {
    for (const id of toolCallIds) this.#cause(id).resolve(eventId);
  }

  reject(toolCallIds: readonly string[], error: unknown): void {
    for (const id of toolCallIds) this.#cause(id).reject(error);
  }

  /** The eventId of the model completion that asked for this tool call, if one was seen. */
  of(toolCallId: string | undefined): Promise<string> | undefined {
    if (toolCallId === undefined) return undefined;
    return this.#causes.get(toolCallId)?.promise;
  }
}
