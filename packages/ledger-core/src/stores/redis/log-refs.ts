import type { Cluster, Redis } from "ioredis";
import { isBlobRef } from "../../store/blob.js";

/** Events of a session's log read per round trip. */
const LOG_PAGE = 500;

/**
 * The length of a session's log and the blobs its events name (`evidenceRefs`), read a page at
 * a time: only the refs are kept (the whole log in one reply held a large session's every event
 * in memory at once). The log only grows: pages read until a short one are a prefix of it.
 */
export async function logRefs(
  client: Redis | Cluster,
  log: string,
): Promise<{ events: number; refs: string[] }> {
  const refs = new Set<string>();
  let events = 0;
  for (;;) {
    const page = await client.lrange(log, events, events + LOG_PAGE - 1);
    events += page.length;
    for (const json of page) {
      if (!json.includes('"evidenceRefs"')) continue;
      const named = (JSON.parse(json) as { evidenceRefs?: unknown }).evidenceRefs;
      if (Array.isArray(named)) for (const ref of named) if (isBlobRef(ref)) refs.add(ref);
    }
    if (page.length < LOG_PAGE) return { events, refs: [...refs] };
  }
}
