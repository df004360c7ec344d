import { assertId } from "../../events/ids.js";
import type { LedgerEvent, RunHead } from "../../events/types.js";
import type {
  EventPage,
  ReadRunRequest,
  ReadSessionRequest,
  RunSummary,
} from "../../store/event-store.js";
import { assertRunAddress, validateReadRun, validateReadSession } from "../../store/validate.js";
import { unavailable } from "./client.js";
import { decodeEvent, decodeHead, decodePairs } from "./codec.js";
import { idFromField, runKeys, runKeysByHash, sessionKeys } from "./keys.js";
import { READ_RUN_SCRIPT, runScript } from "./scripts.js";
import type { RedisStoreState } from "./store-state.js";

/** `RedisEventStore.readRun`. */
export async function readRunEvents(
  state: RedisStoreState,
  request: ReadRunRequest,
): Promise<EventPage> {
  validateReadRun(request);
  const from = request.fromSeq ?? 0;
  const events = await readRunSlice(state, request.sessionId, request.runId, from, request.limit);
  return { events, nextCursor: from + events.length };
}

/** A run's events from seq `from` on, at most `limit` of them (all without a limit). */
export async function readRunSlice(
  state: RedisStoreState,
  sessionId: string,
  runId: string,
  from: number,
  limit: number | undefined,
): Promise<LedgerEvent[]> {
  const session = sessionKeys(state.prefix, sessionId);
  const run = runKeys(state.prefix, sessionId, runId);
  const to = limit === undefined ? -1 : from + limit - 1;
  try {
    const reply = (await runScript(
      state.client,
      READ_RUN_SCRIPT,
      [run.events, session.log],
      [from, to],
    )) as unknown[];
    return decodePairs(reply);
  } catch (error) {
    throw unavailable(error, "readRun", state.client);
  }
}

/** `RedisEventStore.readSession`. */
export async function readSessionEvents(
  state: RedisStoreState,
  request: ReadSessionRequest,
): Promise<EventPage> {
  validateReadSession(request);
  const after = request.after ?? 0;
  const to = request.limit === undefined ? -1 : after + request.limit - 1;
  const session = sessionKeys(state.prefix, request.sessionId);
  try {
    // The log's index i holds cursor i + 1, and the script appends to it and bumps the
    // counter in one step: a page never has a gap that a later commit could fill.
    const jsons = await state.client.lrange(session.log, after, to);
    const events = jsons.map((json, index) => decodeEvent(json, after + index + 1));
    return { events, nextCursor: after + events.length };
  } catch (error) {
    throw unavailable(error, "readSession", state.client);
  }
}

/** `RedisEventStore.listRuns`. */
export async function listRunSummaries(
  state: RedisStoreState,
  sessionId: string,
): Promise<RunSummary[]> {
  assertId(sessionId, "$.sessionId");
  const session = sessionKeys(state.prefix, sessionId);
  try {
    const hashes = await state.client.lrange(session.runs, 0, -1);
    // Separate commands rather than a pipeline: they pipeline on the wire all the same, and
    // an ioredis Cluster pipeline would need them in one slot (they are, but stay portable).
    const heads = await Promise.all(
      hashes.map((hash) =>
        state.client.hmget(
          runKeysByHash(state.prefix, sessionId, hash).head,
          "runId",
          "parentRunId",
          "length",
          "status",
          "lastHash",
          "startedAt",
        ),
      ),
    );
    const summaries: RunSummary[] = [];
    for (const [runId, parentRunId, length, status, lastHash, startedAt] of heads) {
      // A head is written with its run id when the run is made: one missing was deleted
      // (deleteSession) between the two reads, and so was its run.
      if (!runId) continue;
      const head = decodeHead([length ?? null, status ?? null, lastHash ?? null]);
      const summary: RunSummary = {
        runId: idFromField(runId),
        length: head.length,
        status: head.status,
        lastHash: head.lastHash,
        startedAt: startedAt ?? "",
      };
      if (parentRunId) summary.parentRunId = idFromField(parentRunId);
      summaries.push(summary);
    }
    return summaries;
  } catch (error) {
    throw unavailable(error, "listRuns", state.client);
  }
}

/** `RedisEventStore.runHead`. */
export async function readRunHead(
  state: RedisStoreState,
  request: { sessionId: string; runId: string },
): Promise<RunHead> {
  assertRunAddress(request);
  const run = runKeys(state.prefix, request.sessionId, request.runId);
  try {
    return decodeHead(await state.client.hmget(run.head, "length", "status", "lastHash"));
  } catch (error) {
    throw unavailable(error, "runHead", state.client);
  }
}
