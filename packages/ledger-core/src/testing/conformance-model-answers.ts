import { LedgerError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import type {
  AppendRequest,
  EventPage,
  EventStore,
  RunSummary,
  SessionSummary,
} from "../store/event-store.js";

/**
 * The answers the store under test and the reference give to one step of a random sequence
 * (see conformance-model.ts), in the shape both must agree on: times, hashes and the ids a fork
 * makes at random are left out or replaced by their aliases.
 */

export type Outcome = { ok: unknown } | { error: Record<string, unknown> };

/** What an event shows that both stores must agree on. */
export function comparable(
  event: LedgerEvent,
  aliases: Map<string, string>,
): Record<string, unknown> {
  const { recordedAt: _time, hash: _hash, prevHash: _prev, ...rest } = event;
  const out: Record<string, unknown> = {
    ...rest,
    eventId: aliases.get(event.eventId) ?? event.eventId,
  };
  if (event.causedByEventId !== undefined)
    out.causedByEventId = aliases.get(event.causedByEventId) ?? event.causedByEventId;
  return out;
}

export function page(result: EventPage, aliases: Map<string, string>): unknown {
  return {
    events: result.events.map((event) => comparable(event, aliases)),
    nextCursor: result.nextCursor,
  };
}

export function runs(result: RunSummary[]): unknown {
  return result.map(({ lastHash: _hash, startedAt: _started, ...rest }) => rest);
}

export function sessions(result: { sessions: SessionSummary[]; nextCursor?: string }): unknown {
  return {
    sessions: result.sessions.map(({ createdAt: _c, updatedAt: _u, ...rest }) => rest),
    nextCursor: result.nextCursor,
  };
}

export async function outcome(action: () => Promise<unknown>, shape: (value: never) => unknown) {
  try {
    return { ok: shape((await action()) as never) } satisfies Outcome;
  } catch (error) {
    if (!LedgerError.isInstance(error)) throw error;
    const failure = error as LedgerError & { actualSeq?: number; eventId?: string };
    const out: Record<string, unknown> = { code: failure.code, path: failure.path };
    if (failure.actualSeq !== undefined) out.actualSeq = failure.actualSeq;
    if (failure.eventId !== undefined) out.eventId = failure.eventId;
    return { error: out } satisfies Outcome;
  }
}

/** One step: a description (for the failure message) and the call to make on a store. */
export interface Step {
  what: string;
  call: (store: EventStore, aliases: Map<string, string>) => Promise<Outcome>;
  /** A new batch: remembered for retries when the reference accepts it. */
  batch?: AppendRequest;
  /** A fork: its new run joins the session's runs when the reference makes it. */
  fork?: { sessionId: string; newRunId: string };
  /** A deletion of this session (after closing its runs): the answer is the deletion's. */
  deleted?: string;
}

/**
 * What kind of answer a step got: an error code, `written`, `deduplicated`, `forked`, `deleted`
 * or `read`.
 */
export function answerKind(answer: Outcome, step: Step): string {
  if ("error" in answer) return String(answer.error.code);
  if (step.fork !== undefined) return "forked";
  if (step.deleted !== undefined) {
    const last = (answer.ok as Outcome[]).at(-1) as Outcome;
    return "error" in last ? `delete: ${String(last.error.code)}` : "deleted";
  }
  const ok = answer.ok as { deduplicated?: unknown };
  if (typeof ok === "object" && ok !== null && "deduplicated" in ok)
    return ok.deduplicated ? "deduplicated" : "written";
  return "read";
}
