import { describe, expect, it } from "vitest";
import type { LedgerError } from "../events/errors.js";
import { openStore } from "../store/open-store.js";
import { SERVER_URLS, serverAvailable } from "../testing/servers.js";

// A URL that asks for TLS of a server that speaks none (the local ones) fails at once, saying
// so, as the server answers; Redis, which never answers, is in redis/tls-handshake.int.test.ts.
// The URL is what to change, not a server to wait for: invalid-argument at $.url.

const postgres = await serverAvailable("postgres");
const mysql = await serverAvailable("mysql");

/** `base` with a password and `params`: the URL a user would give. */
function withTls(base: string, params: string): string {
  const url = new URL(base);
  url.password = "s3cret-pw";
  url.search = params;
  return url.toString();
}

async function expectRefusedFast(url: string, says: RegExp): Promise<void> {
  const started = Date.now();
  const error = await openStore(url).then(
    async (store) => {
      await store.close();
      throw new Error("opened");
    },
    (failure: LedgerError) => failure,
  );
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(error).toMatchObject({
    code: "invalid-argument",
    path: "$.url",
    details: { refusal: "no-tls" },
  });
  expect(error.message).toMatch(says);
  expect(error.message).not.toContain("s3cret");
}

describe("a URL asking for TLS of a server without it", () => {
  it.skipIf(!postgres)(
    "PostgreSQL ?sslmode=require fails at once: the server does not support SSL",
    async () => {
      await expectRefusedFast(
        withTls(SERVER_URLS.postgres, "?sslmode=require"),
        /^\$\.url: the server at .* takes no TLS there \(The server does not support SSL connections/,
      );
    },
  );

  it.skipIf(!mysql)(
    "MySQL ?ssl= fails at once: the server does not support secure connections",
    async () => {
      await expectRefusedFast(
        withTls(SERVER_URLS.mysql, '?ssl={"rejectUnauthorized":true}'),
        /^\$\.url: the server at .* takes no TLS there \(Server does not support secure connection/,
      );
    },
  );
});
