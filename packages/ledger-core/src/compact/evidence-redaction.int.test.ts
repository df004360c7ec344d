import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import { DEFAULT_CREDENTIAL_PATHS } from "../recorder/redact.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeSession } from "../store/read-all.js";
import { PostgresEventStore } from "../stores/postgres/postgres-store.js";
import { RedisEventStore } from "../stores/redis/redis-store.js";
import { deleteKeys, freshPrefix } from "../stores/redis/testing/test-keys.js";
import { SqliteEventStore } from "../stores/sqlite/sqlite-store.js";
import { freshPlaces } from "../testing/fresh-places.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import {
  type SecretHit,
  scanPostgresForSecret,
  scanRedisForSecret,
  scanSqliteForSecret,
} from "../testing/secret-scan.js";
import { SERVER_URLS, serverAvailable } from "../testing/servers.js";
import { latestEvidence } from "./evidence.js";

const actor = { type: "agent" as const, id: "agent" };
const folder = scratchDirectory("ledger-evidence-", { beforeAll, afterAll });
const postgres = await serverAvailable("postgres");
const redis = await serverAvailable("redis");
const places = freshPlaces(afterAll);
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteKeys(SERVER_URLS.redis, prefix);
});

interface Backend {
  name: string;
  skip: boolean;
  open(): Promise<{ store: EventStore; scan(secret: string): Promise<SecretHit[]> }>;
}

const backends: Backend[] = [
  {
    name: "SQLite",
    skip: false,
    async open() {
      const path = join(folder, `${uuidv7()}.db`);
      const store = new SqliteEventStore({ path });
      await store.init();
      return { store, scan: (secret) => scanSqliteForSecret(path, secret) };
    },
  },
  {
    name: "PostgreSQL",
    skip: !postgres,
    async open() {
      const schema = places.schema("ev");
      const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      await store.init();
      return {
        store,
        scan: (secret) => scanPostgresForSecret(SERVER_URLS.postgres, schema, secret),
      };
    },
  },
  {
    name: "Redis",
    skip: !redis,
    async open() {
      const prefix = freshPrefix("ev");
      prefixes.push(prefix);
      const store = new RedisEventStore({ url: SERVER_URLS.redis, keyPrefix: prefix });
      await store.init();
      return { store, scan: (secret) => scanRedisForSecret(SERVER_URLS.redis, prefix, secret) };
    },
  },
];

/** A model call carrying a secret in the places credentials travel, with a long history. */
async function callWithSecret(recorder: SessionRecorder, secret: string): Promise<void> {
  await recorder.startRun();
  const request = {
    model: "gpt-test",
    headers: { authorization: `Bearer ${secret}`, "x-api-key": secret },
    providerOptions: { openai: { apiKey: secret, organization: "org" } },
    settings: { token: secret },
    messages: [
      { role: "system", content: "policy ".repeat(400) },
      { role: "user", content: "summarise the ledger ".repeat(100) },
    ],
  };
  const attempt = await recorder.beforeModelCall({ request });
  await recorder.modelCompleted(attempt, { text: "summary ".repeat(300) });
  await recorder.completeRun("done");
}

describe.each(backends)("evidence and redaction on $name", (backend) => {
  it.skipIf(backend.skip)(
    "latestEvidence: a later record with the same key supersedes, both stay in the log",
    async () => {
      const { store } = await backend.open();
      try {
        const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
        await recorder.startRun();
        const report = await store.putBlob("benchmark report v1");
        const fixed = await store.putBlob("benchmark report v2");
        const log = await store.putBlob("raw log");
        const first = await recorder.recordEvidence({
          key: "accuracy",
          classification: "regression",
          summary: "accuracy fell to 84%",
          evidenceRefs: [report],
        });
        const keyless = await recorder.recordEvidence({
          classification: "note",
          summary: "kept the raw log",
          evidenceRefs: [log],
        });
        const second = await recorder.recordEvidence({
          key: "accuracy",
          classification: "improvement",
          summary: "accuracy back to 88%",
          evidenceRefs: [fixed, log],
        });
        const other = recorder.child({ actor: { type: "agent", id: "helper" } });
        await other.startRun();
        const third = await other.recordEvidence({
          classification: "note",
          summary: "second keyless",
          evidenceRefs: [],
        });
        const latest = await latestEvidence(store, "s");
        expect(latest.map((view) => view.eventId)).toEqual([
          keyless.eventId,
          second.eventId,
          third.eventId,
        ]);
        expect(latest[1]).toMatchObject({
          key: "accuracy",
          classification: "improvement",
          evidenceRefs: [fixed, log],
          supersedes: [first.eventId],
        });
        const all = (await readWholeSession(store, "s")).filter(
          (event) => event.type === "evidence.recorded",
        );
        expect(all).toHaveLength(4);
        expect(all[2]?.evidenceRefs).toEqual([fixed, log]);
        await expect(
          recorder.recordEvidence({
            classification: "x",
            summary: "dangling",
            evidenceRefs: [`sha256:${"b".repeat(64)}`],
          }),
        ).rejects.toMatchObject({ code: "not-found" });
        await recorder.completeRun();
        await expect(
          recorder.recordEvidence({
            key: "accuracy",
            classification: "x",
            summary: "late",
            evidenceRefs: [],
          }),
        ).rejects.toMatchObject({ code: "run-closed" });
        expect((await latestEvidence(store, "s")).length).toBe(3);
      } finally {
        await store.close();
      }
    },
  );

  it.skipIf(backend.skip)(
    "a secret passed to a model call reaches no row, key or blob (and the scan would see it)",
    async () => {
      const secret = `sk-test-${uuidv7()}`;
      const redacted = await backend.open();
      try {
        await callWithSecret(
          new SessionRecorder({
            store: redacted.store,
            sessionId: "s",
            runId: "r",
            actor,
            redact: [...DEFAULT_CREDENTIAL_PATHS],
          }),
          secret,
        );
        const events = await readWholeSession(redacted.store, "s");
        expect(events.some((event) => (event.evidenceRefs ?? []).length > 0)).toBe(true);
        const request = ((events[1]?.payload ?? {}) as JsonObject).request as JsonObject;
        expect(request.headers).toEqual({ authorization: "[redacted]", "x-api-key": "[redacted]" });
      } finally {
        await redacted.store.close();
      }
      expect(await redacted.scan(secret)).toEqual([]);
      // Control: without redaction the same scan finds it (in the compressed blobs too).
      const plain = await backend.open();
      const longSecret = `${secret}-${"x".repeat(1200)}`;
      try {
        await callWithSecret(
          new SessionRecorder({ store: plain.store, sessionId: "s", runId: "r", actor }),
          longSecret,
        );
      } finally {
        await plain.store.close();
      }
      const hits = await plain.scan(secret);
      expect(hits.length).toBeGreaterThan(0);
      expect(hits.some((hit) => hit.where.includes("blob"))).toBe(true);
    },
  );
});
