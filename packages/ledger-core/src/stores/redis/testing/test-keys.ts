import { randomBytes } from "node:crypto";
import { type Cluster, Redis } from "ioredis";
import { globLiteral, scanKeyPages } from "../key-scan.js";

/** A key prefix no other test uses (letters and digits only: safe in a SCAN pattern). */
export function freshPrefix(label = "t"): string {
  return `agent-ledger-test:${label}${randomBytes(6).toString("hex")}:`;
}

/**
 * Every key under a prefix, sorted and each once (SCAN answers a key twice at times; it never
 * blocks the server), from the one server or from each master of a Cluster.
 */
export async function keysUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const keys = new Set<string>();
  for await (const page of scanKeyPages(client, `${globLiteral(prefix)}*`))
    for (const key of page) keys.add(key);
  return [...keys].sort();
}

/** Deletes every key under a prefix. */
export async function deleteKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { lazyConnect: true });
  try {
    const keys = await keysUnder(client, prefix);
    for (let index = 0; index < keys.length; index += 500) {
      await client.del(...keys.slice(index, index + 500));
    }
  } finally {
    client.disconnect();
  }
}
