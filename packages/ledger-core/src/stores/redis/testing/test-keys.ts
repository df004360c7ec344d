import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";

/** A key prefix no other test uses (letters and digits only: safe in a SCAN pattern). */
export function freshPrefix(label = "t"): string {
  return `agent-ledger-test:${label}${randomBytes(6).toString("hex")}:`;
}

/** Every key under a prefix (SCAN, so it never blocks the server). */
export async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, batch] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== "0");
  return keys;
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
