import { join } from "node:path";
import {
  type EventStore,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
  uuidv7,
} from "@agent-ledger/core";
import { PostgresEventStore } from "@agent-ledger/core/postgres";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import {
  freshPlaces,
  SERVER_URLS,
  type SecretHit,
  scanPostgresForSecret,
  scanSqliteForSecret,
  scratchDirectory,
  serverAvailable,
} from "@agent-ledger/core/testing";
import { generateText, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { scriptedModel, textResult } from "./testing/scripted-model.test.data.js";

const folder = scratchDirectory("ai-sdk-redaction-", { beforeAll, afterAll });
const postgres = await serverAvailable("postgres");
const places = freshPlaces(afterAll);

const targets = [
  {
    name: "SQLite",
    skip: false,
    async open(): Promise<{ store: EventStore; scan(secret: string): Promise<SecretHit[]> }> {
      const path = join(folder, `${uuidv7()}.db`);
      const store = new SqliteEventStore({ path });
      await store.init();
      return { store, scan: (secret) => scanSqliteForSecret(path, secret) };
    },
  },
  {
    name: "PostgreSQL",
    skip: !postgres,
    async open(): Promise<{ store: EventStore; scan(secret: string): Promise<SecretHit[]> }> {
      const schema = places.schema("aisdk_red");
      const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      await store.init();
      return {
        store,
        scan: (secret) => scanPostgresForSecret(SERVER_URLS.postgres, schema, secret),
      };
    },
  },
];

async function call(store: EventStore, secret: string, redact?: false): Promise<void> {
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "assistant", framework: "ai-sdk" },
  });
  // A gateway that echoes credentials in the response's provider metadata.
  const answer = {
    ...textResult("noted ".repeat(300)),
    providerMetadata: { gw: { apiKey: secret } },
  };
  const { model } = scriptedModel([answer]);
  await generateText({
    model: wrapLanguageModel({
      model,
      middleware: ledgerMiddleware({ recorder, ...(redact === false ? { redact } : {}) }),
    }),
    system: "policy text ".repeat(200),
    // A person pastes a DSN; a password in a URL is not kept even in the conversation.
    messages: [{ role: "user", content: `hi, use postgres://app:${secret}@db/x, thanks` }],
    headers: { authorization: `Bearer ${secret}`, "x-api-key": secret },
    providerOptions: {
      openai: { apiKey: secret, user: "u1" },
      relay: { user: "u1", pass: secret, url: `https://u:${secret}@relay.example` },
      // Any case or spelling, at any depth: a gateway's BYOK credentials, a custom header.
      gateway: {
        token: secret,
        byok: {
          bedrock: [{ region: "us-east-1", secretAccessKey: secret, sessionToken: secret }],
          vertex: [{ project: "p", googleCredentials: { privateKey: secret } }],
          azure: [{ resourceName: "r", clientSecret: secret }],
        },
      },
      proxy: { extraHeaders: { "X-API-Key": secret, "Ocp-Apim-Subscription-Key": secret } },
    },
  });
  await recorder.completeRun("done");
}

describe.each(targets)("AI SDK credentials on $name", (target) => {
  it.skipIf(target.skip)(
    "apiKey, token and headers of a call reach no row or blob by default",
    async () => {
      const secret = `sk-live-${uuidv7()}`;
      const redacted = await target.open();
      try {
        await call(redacted.store, secret);
      } finally {
        await redacted.store.close();
      }
      expect(await redacted.scan(secret)).toEqual([]);
      // Control: with redaction turned off the provider options carry it into the ledger.
      const plain = await target.open();
      try {
        await call(plain.store, secret, false);
      } finally {
        await plain.store.close();
      }
      expect((await plain.scan(secret)).length).toBeGreaterThan(0);
    },
  );
});

describe("ledgerMiddleware's redact option", () => {
  it("a redaction that would match nothing is refused when the middleware is made", () => {
    const recorder = new SessionRecorder({
      store: new MemoryEventStore(),
      sessionId: "s",
      actor: { type: "agent", id: "assistant" },
    });
    for (const [redact, path] of [
      ["**.apiKey", "$.redact"],
      [["**.apiKey", 42], "$.redact[1]"],
      [["providerOptions..apiKey"], "$.redact[0]"],
    ] as const) {
      let error: unknown;
      try {
        ledgerMiddleware({ recorder, redact: redact as never });
      } catch (caught) {
        error = caught;
      }
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
    }
  });
});
