import assert from "node:assert/strict";
import { uuidv7 } from "../../../events/ids.js";
import type { StoreDescription } from "../../../store/event-store.js";
import { openStore } from "../../../store/open-store.js";

/**
 * Opens `url` with `openStore`, appends one event to a new session and reads it back. Returns
 * the session and the store's description, for the caller to check where the event went.
 */
export async function appendThroughUrl(
  url: string,
): Promise<{ sessionId: string; description: StoreDescription }> {
  const store = await openStore(url);
  try {
    const sessionId = `open-${uuidv7()}`;
    const written = await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    assert.deepStrictEqual((await store.readSession({ sessionId })).events, written.events);
    return { sessionId, description: store.describe() };
  } finally {
    await store.close();
  }
}
