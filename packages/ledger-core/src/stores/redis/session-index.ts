import type { ListSessionsRequest, SessionPage, SessionSummary } from "../../store/event-store.js";
import { validateListSessions } from "../../store/validate.js";
import { unavailable } from "./client.js";
import {
  type SessionKeys,
  sessionFromMember,
  sessionKeys,
  sessionMember,
  sessionsKey,
} from "./keys.js";
import type { RedisStoreState } from "./store-state.js";

/**
 * Adds the session to the global index for listSessions. That key lives outside the
 * session's hash slot (on a Cluster, on another node), so the append script cannot write it;
 * it is written here, after the script succeeded, with an idempotent ZADD, and the session's
 * `listed` flag is set only afterwards. If the process dies in between, the script reports
 * `listed = 0` on the session's next append and this runs again.
 */
export async function listSession(
  state: RedisStoreState,
  session: SessionKeys,
  sessionId: string,
): Promise<void> {
  await state.client.zadd(sessionsKey(state.prefix), 0, sessionMember(sessionId));
  await state.client.hset(session.meta, "listed", "1");
}

/** The session listed, unless its `listed` flag says it is. */
export async function listIfUnlisted(
  state: RedisStoreState,
  session: SessionKeys,
  sessionId: string,
): Promise<void> {
  if ((await state.client.hget(session.meta, "listed")) !== "1")
    await listSession(state, session, sessionId);
}

/** `RedisEventStore.listSessions` (its comment says why a member without events is skipped). */
export async function listSessionPage(
  state: RedisStoreState,
  request: ListSessionsRequest = {},
): Promise<SessionPage> {
  validateListSessions(request);
  // One more than the page, to know whether another page follows.
  const wanted = request.limit === undefined ? Number.POSITIVE_INFINITY : request.limit + 1;
  const found: SessionSummary[] = [];
  let start: string | Buffer =
    request.after === undefined
      ? "-"
      : Buffer.concat([Buffer.from("("), sessionMember(request.after)]);
  try {
    while (found.length < wanted) {
      const asked = wanted - found.length;
      const members = Number.isFinite(asked)
        ? await state.client.zrangebylexBuffer(
            sessionsKey(state.prefix),
            start,
            "+",
            "LIMIT",
            0,
            asked,
          )
        : await state.client.zrangebylexBuffer(sessionsKey(state.prefix), start, "+");
      const last = members[members.length - 1];
      if (last === undefined) break;
      const ids = members.map(sessionFromMember);
      const metas = await Promise.all(
        ids.map((sessionId) =>
          state.client.hmget(
            sessionKeys(state.prefix, sessionId).meta,
            "cursor",
            "createdAt",
            "updatedAt",
          ),
        ),
      );
      ids.forEach((sessionId, index) => {
        const [cursor, createdAt, updatedAt] = metas[index] ?? [];
        if (cursor === null || cursor === undefined) return;
        found.push({
          sessionId,
          eventCount: Number(cursor),
          createdAt: createdAt ?? "",
          updatedAt: updatedAt ?? "",
        });
      });
      if (members.length < asked) break;
      start = Buffer.concat([Buffer.from("("), last]);
    }
  } catch (error) {
    throw unavailable(error, "listSessions", state.client);
  }
  const sessions = request.limit === undefined ? found : found.slice(0, request.limit);
  const page: SessionPage = { sessions };
  const last = sessions[sessions.length - 1];
  if (found.length > sessions.length && last !== undefined) page.nextCursor = last.sessionId;
  return page;
}
