import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { openStore } from "../store/open-store.js";
import { SERVER_URLS, serverAvailable } from "../testing/servers.js";

// A store URL the server refuses (a database that is not there, a user or password it does not
// take) is the caller's configuration, which no wait mends: not store-unavailable, which
// supervisors and scripts retry for ever. The local servers, as they answer.

const postgres = await serverAvailable("postgres");
const mysql = await serverAvailable("mysql");
const redis = await serverAvailable("redis");

/** `base` with `change` applied to its URL. */
function changed(base: string, change: (url: URL) => void): string {
  const url = new URL(base);
  change(url);
  return url.toString();
}

/** What openStore(url, options) rejects with (a store that opens is closed, and fails the test). */
async function refusal(url: string, options: { create?: boolean } = {}): Promise<unknown> {
  return openStore(url, options).then(
    async (store) => {
      await store.close();
      throw new Error(`${url} opened`);
    },
    (error: unknown) => error,
  );
}

const missingDatabase = () => `agent_ledger_missing_${randomBytes(4).toString("hex")}`;

describe("a store URL whose database the server does not have", () => {
  for (const [kind, available] of [
    ["postgres", postgres],
    ["mysql", mysql],
  ] as const)
    it.skipIf(!available)(
      `${kind}: not-found under create: false, invalid-argument at $.url otherwise`,
      async () => {
        const name = missingDatabase();
        const url = changed(SERVER_URLS[kind], (url) => {
          url.pathname = `/${name}`;
        });
        expect(await refusal(url, { create: false })).toMatchObject({
          code: "not-found",
          message: expect.stringMatching(new RegExp(`^no ledger at .*${name}`)),
          details: { refusal: "no-database" },
        });
        expect(await refusal(url)).toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          message: expect.stringContaining(name),
          details: { refusal: "no-database" },
        });
      },
    );

  it.skipIf(!redis)("redis: a database number it lacks is the same", async () => {
    const url = changed(SERVER_URLS.redis, (url) => {
      url.pathname = "/99";
    });
    expect(await refusal(url, { create: false })).toMatchObject({
      code: "not-found",
      details: { refusal: "no-database" },
    });
    expect(await refusal(url)).toMatchObject({ code: "invalid-argument", path: "$.url" });
  });
});

describe("a store URL whose credentials the server refuses", () => {
  const secret = `pw-${randomBytes(6).toString("hex")}`;
  const cases = [
    // The local PostgreSQL trusts every known role: a role it does not know is refused.
    ["postgres", postgres, "agent_ledger_no_such_role"],
    ["mysql", mysql, "root"],
    ["redis", redis, "agent-ledger-no-such-user"],
  ] as const;
  for (const [kind, available, user] of cases)
    it.skipIf(!available)(`${kind}: invalid-argument at $.url, the password left out`, async () => {
      const url = changed(SERVER_URLS[kind], (url) => {
        url.username = user;
        url.password = secret;
      });
      for (const create of [true, false]) {
        const error = await refusal(url, { create });
        expect(error).toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          message: expect.stringContaining("refused the credentials"),
          details: { refusal: "credentials" },
        });
        expect(inspect(error, { depth: 10 })).not.toContain(secret);
      }
    });
});
