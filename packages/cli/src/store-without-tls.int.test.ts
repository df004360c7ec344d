import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import { describe, expect, it } from "vitest";
import { runBin } from "./session-fixture.test.data.js";

// A store URL asking for TLS of a server that takes none there (the local ones) is a URL to
// mend, not a server out of reach: exit 2, saying so, where it exited 4, which a script
// retries later, forever. The password is never printed.
const servers = {
  postgres: await serverAvailable("postgres"),
  mysql: await serverAvailable("mysql"),
  redis: await serverAvailable("redis"),
};

/** `base` with a password, and TLS asked for as the driver's URL asks for it. */
function asksForTls(base: string, ask: (url: URL) => void): string {
  const url = new URL(base);
  url.password = "s3cret-pw";
  ask(url);
  return url.toString();
}

const cases = [
  {
    server: "postgres" as const,
    url: () =>
      asksForTls(SERVER_URLS.postgres, (url) => url.searchParams.set("sslmode", "require")),
  },
  {
    server: "mysql" as const,
    url: () => asksForTls(SERVER_URLS.mysql, (url) => url.searchParams.set("ssl", "{}")),
  },
  {
    server: "redis" as const,
    url: () =>
      asksForTls(SERVER_URLS.redis, (url) => {
        url.protocol = "rediss:";
      }),
  },
];

describe("agent-ledger with a store URL asking for TLS of a server without it", () => {
  for (const { server, url } of cases)
    it.skipIf(!servers[server])(`${server}: exit 2, the URL to mend, no password`, async () => {
      const result = await runBin(["--store", url(), "sessions"]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("takes no TLS there");
      expect(result.stderr).toContain("drop it for a server without TLS");
      expect(result.stdout + result.stderr).not.toContain("s3cret-pw");
    });
});
