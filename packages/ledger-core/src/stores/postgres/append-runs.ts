import { bufferOf } from "../../store/blob.js";
import { type HeadAppend, inLockOrder } from "../sql/head-cache.js";
import { appendQueries } from "./append-queries.js";
import { autocommit } from "./autocommit.js";
import type { PostgresBackendState } from "./backend-state.js";

/**
 * `PostgresBackend.appendAtHeads` for appends that go together: the call of the function its
 * comment describes, with the appends' columns as arrays.
 */
export async function appendRuns(
  state: PostgresBackendState,
  appends: HeadAppend[],
): Promise<(number | undefined)[]> {
  const order = inLockOrder(appends);
  const column = <V>(pick: (append: HeadAppend) => V) => order.map(({ append }) => pick(append));
  /** `pick`'s items of every append, each with the append's place in the arrays (from 1). */
  const owned = <V>(pick: (append: HeadAppend) => V[]) =>
    order.flatMap(({ append }, place) => pick(append).map((item) => ({ item, owner: place + 1 })));
  const events = order.flatMap(({ append }) => append.events);
  const refs = owned((append) => append.refs);
  const blobs = owned((append) => append.blobs);
  const values: unknown[] = [
    appends[0]?.sessionId,
    column((append) => append.runId),
    column((append) => append.length),
    column((append) => append.status),
    column((append) => append.lastHash),
    column((append) => append.expected.length),
    column((append) => append.expected.lastHash),
    column((append) => append.events.length),
    appends[0]?.now,
    events.map((event) => event.seq),
    events.map((event) => event.eventId),
    events.map((event) => event.eventType),
    events.map((event) => event.recordedAt),
    events.map((event) => event.bodyPrefix),
  ];
  let query = appendQueries(state).runs;
  if (refs.length > 0 || blobs.length > 0) {
    values.push(
      refs.map(({ item }) => item),
      refs.map(({ owner }) => owner),
      blobs.map(({ item }) => item.ref),
      blobs.map(({ item }) => bufferOf(item.stored)),
      blobs.map(({ owner }) => owner),
    );
    query = appendQueries(state).runsBlobs;
  }
  const result = await autocommit<{ ord: number; last_cursor: string | number }>(
    state,
    query,
    values,
  );
  const lasts: (number | undefined)[] = appends.map(() => undefined);
  for (const row of result.rows) {
    const entry = order[row.ord - 1];
    if (entry !== undefined) lasts[entry.index] = Number(row.last_cursor);
  }
  return lasts;
}
