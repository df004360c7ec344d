import { randomUUID } from "node:crypto";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import { Redis } from "ioredis";
import { afterAll, expect } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";

const available = await serverAvailable("redis");
// Its own key prefix (named in the URL, as a user's CLI reaches a ledger that shares a
// database), whose keys are deleted after.
const keyPrefix = `cli-${randomUUID()}:`;
/** The test server's URL with `prefix` as the key prefix. */
function underPrefix(prefix: string): string {
  const url = new URL(SERVER_URLS.redis);
  url.searchParams.set("keyPrefix", prefix);
  return url.toString();
}
const storeUrl = underPrefix(keyPrefix);
/** An ACL user that may only read the ledger's keys (made once the ledger is there). */
const reader = `ro-${randomUUID()}`;
const readerUrl = (() => {
  const url = new URL(storeUrl);
  url.username = reader;
  url.password = "reader-pw";
  return url.toString();
})();

/** An ACL user that may read the ledger's keys but not run its scripts. */
const keyReader = `ro-keys-${randomUUID()}`;

async function keysUnder(prefix: string): Promise<string[]> {
  return withClient(async (client) => {
    const keys: string[] = [];
    for await (const batch of client.scanStream({ match: `${prefix}*`, count: 500 }))
      keys.push(...(batch as string[]));
    return keys;
  });
}

async function withClient<T>(work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(SERVER_URLS.redis);
  try {
    return await work(client);
  } finally {
    client.disconnect();
  }
}

afterAll(async () => {
  if (!available) return;
  const keys = await keysUnder(keyPrefix);
  if (keys.length > 0) await withClient((client) => client.del(...keys));
  await withClient((client) => client.call("ACL", "DELUSER", reader, keyReader));
});

describeCliCommands({
  skip: !available,
  name: "Redis",
  storeUrl,
  sessionId: `cli-redis-${randomUUID()}`,
  async tamper({ sessionId, runId, seq }) {
    // The session's events are one list in commit order (its `:log` key): edit the event
    // where it lies, as someone with access to the server could.
    await withClient(async (client) => {
      let edited = 0;
      for (const log of (await keysUnder(keyPrefix)).filter((key) => key.endsWith(":log"))) {
        const events = await client.lrange(log, 0, -1);
        for (const [index, json] of events.entries()) {
          const event = JSON.parse(json) as { sessionId: string; runId: string; seq: number };
          if (event.sessionId !== sessionId || event.runId !== runId || event.seq !== seq) continue;
          expect(json).toContain("Book a table");
          await client.lset(log, index, json.replace("Book a table", "Book a TABLE"));
          edited++;
        }
      }
      expect(edited).toBe(1);
    });
  },
  readOnly: {
    storeUrl: readerUrl,
    refusal: /append failed: .*can't run this command/,
    async grant() {
      // Reads are commands of @read and scripts that only read; CONFIG (durability) is not
      // granted, as on managed servers.
      await withClient((client) =>
        client.call(
          "ACL",
          "SETUSER",
          reader,
          "on",
          ">reader-pw",
          `~${keyPrefix}*`,
          "+@read",
          "+@connection",
          "+info",
          "+evalsha",
          "+eval",
        ),
      );
    },
    keysOnly: {
      storeUrl: (() => {
        const url = new URL(storeUrl);
        url.username = keyReader;
        url.password = "reader-pw";
        return url.toString();
      })(),
      grantKeys: async () => {
        await withClient((client) =>
          client.call(
            "ACL",
            "SETUSER",
            keyReader,
            "on",
            ">reader-pw",
            `~${keyPrefix}*`,
            "+@read",
            "+@connection",
            "+info",
          ),
        );
      },
    },
  },
  refused: {
    // Database numbers stop at 15 on a default server.
    noDatabase: (() => {
      const url = new URL(storeUrl);
      url.pathname = "/9999";
      return url.toString();
    })(),
    badCredentials: (() => {
      const url = new URL(storeUrl);
      url.username = `no-${reader}`;
      url.password = "wrong-pw";
      return url.toString();
    })(),
  },
  noLedger: {
    storeUrl: underPrefix(`${keyPrefix}none:`),
    leftovers: async () => (await keysUnder(`${keyPrefix}none:`)).length,
  },
});
