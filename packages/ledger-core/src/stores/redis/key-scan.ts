import type { Cluster, Redis } from "ioredis";
import { isCluster } from "./client.js";

/** Keys SCAN examines per call: the server's work per call stays small whatever the database. */
const SCAN_COUNT = 1000;

/** `text` with SCAN's glob characters escaped, so a prefix is matched literally. */
export function globLiteral(text: string): string {
  return text.replace(/[\\*?[\]]/g, (character) => `\\${character}`);
}

/**
 * The servers to scan: the masters of a Cluster, or the one server. A Cluster client learns its
 * nodes as it connects: one not connected yet (lazyConnect, no command sent) knows none, and a
 * scan of them would silently find nothing. A PING waits for it to be ready.
 */
async function masters(client: Redis | Cluster): Promise<Redis[]> {
  if (!isCluster(client)) return [client as Redis];
  if (client.nodes("master").length === 0) await client.ping();
  return client.nodes("master");
}

/**
 * The keys matching `pattern`, a SCAN page at a time, from each master of a Cluster (each holds
 * only its own slots) or from the one server, named as the client's other commands name them.
 * A client with its own ioredis `keyPrefix` adds it to the keys of every command, but not to
 * SCAN's pattern nor to the keys SCAN answers: both are translated here. SCAN may answer a key
 * twice, and a key written or moved during the scan may be missed: callers must tolerate both.
 */
export async function* scanKeyPages(
  client: Redis | Cluster,
  pattern: string,
): AsyncGenerator<string[]> {
  const nodes = await masters(client);
  const clientPrefix = client.options.keyPrefix ?? "";
  for (const node of nodes) {
    let cursor = "0";
    do {
      const [next, batch] = await node.scan(
        cursor,
        "MATCH",
        `${globLiteral(clientPrefix)}${pattern}`,
        "COUNT",
        SCAN_COUNT,
      );
      cursor = next;
      const keys: string[] = [];
      for (const key of batch)
        if (key.startsWith(clientPrefix)) keys.push(key.slice(clientPrefix.length));
      if (keys.length > 0) yield keys;
    } while (cursor !== "0");
  }
}
