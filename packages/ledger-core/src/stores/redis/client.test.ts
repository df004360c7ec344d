import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { evictsLedgerKeys, serverTooOld } from "./client.js";
import { RedisEventStore } from "./redis-store.js";

/** A local port nothing listens on (taken from the system, then freed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const info = (version: string) =>
  `# Server\r\nredis_version:${version}\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n`;

describe("serverTooOld", () => {
  it("refuses a server before 5.0, whose scripts cannot write after TIME", () => {
    expect(serverTooOld(info("4.0.14"))).toMatch(/version 4\.0\.14; agent-ledger needs Redis 5\.0/);
    expect(serverTooOld(info("3.2.12"))).toBeDefined();
  });

  it("takes 5.0 and later, and servers that report no version (let their first append say)", () => {
    for (const version of ["5.0.0", "6.2.14", "7.0.15", "7.2.4", "8.0.2"])
      expect(serverTooOld(info(version)), version).toBeUndefined();
    expect(serverTooOld("# Server\r\nredis_mode:standalone\r\n")).toBeUndefined();
    expect(serverTooOld(info("unknown"))).toBeUndefined();
  });
});

describe("evictsLedgerKeys", () => {
  const settings = (maxmemory: string, policy: string) => ({
    maxmemory,
    "maxmemory-policy": policy,
  });

  it("refuses a memory limit under an allkeys policy, which may evict any of the ledger's keys", () => {
    for (const policy of ["allkeys-lru", "allkeys-lfu", "allkeys-random"])
      expect(evictsLedgerKeys(settings("1073741824", policy)), policy).toMatch(
        new RegExp(`maxmemory-policy ${policy}.*noeviction`),
      );
  });

  it("takes noeviction, the volatile policies (the ledger's keys have no TTL), no limit, and settings CONFIG hides", () => {
    for (const policy of [
      "noeviction",
      "volatile-lru",
      "volatile-lfu",
      "volatile-random",
      "volatile-ttl",
    ])
      expect(evictsLedgerKeys(settings("1073741824", policy)), policy).toBeUndefined();
    expect(evictsLedgerKeys(settings("0", "allkeys-lru"))).toBeUndefined();
    expect(evictsLedgerKeys(settings("unknown", "unknown"))).toBeUndefined();
  });
});

describe("a store whose server cannot be reached", () => {
  it("says why, without the warning about a write it did not attempt", async () => {
    const port = await closedPort();
    const store = new RedisEventStore({ url: `redis://127.0.0.1:${port}` });
    try {
      const failure = await store.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(LedgerError.isInstance(failure, "store-unavailable")).toBe(true);
      const message = (failure as Error).message;
      expect(message).toContain("redis init failed: no connection to the server");
      expect(message).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
      expect(message).not.toMatch(/append|retrying/);
    } finally {
      await store.close();
    }
  });
});
