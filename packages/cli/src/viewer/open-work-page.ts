import type { EventStore } from "@agent-ledger/core";
import { type SessionWithOpenWork, sessionsWithOpenWork } from "../open-work.js";

/**
 * Sessions read per request of the page "sessions with something open" (`/api/open-work`):
 * each is read whole, as `inspect` reads it, so a request on a ledger of large sessions takes as
 * long as inspecting this many; the page asks for the next as soon as one comes.
 */
export const OPEN_WORK_PAGE = 100;

/** An answer of `/api/open-work`. */
export interface OpenWorkPage {
  /** Those of the sessions read that have something open, with `inspect`'s counts. */
  sessions: SessionWithOpenWork[];
  /** How many sessions of the store's list were read (those with something open: `sessions`). */
  checked: number;
  /** The session id to ask `after` for the next sessions; absent when every session was read. */
  nextCursor?: string;
}

/** The next `limit` sessions of the store's list after `after`, read for their open work. */
export async function openWorkPage(
  store: EventStore,
  query: { after?: string; limit: number },
): Promise<OpenWorkPage> {
  const page = await store.listSessions(query);
  return {
    sessions: await sessionsWithOpenWork(store, page.sessions),
    checked: page.sessions.length,
    ...(page.nextCursor === undefined ? {} : { nextCursor: page.nextCursor }),
  };
}
