import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { freshPlaces } from "../../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../../testing/servers.js";
import { deleteKeys, freshPrefix } from "../../redis/testing/test-keys.js";
import type { RacerTarget } from "./racer-store.js";

const storeNames: Record<RacerTarget["kind"], string> = {
  sqlite: "SqliteEventStore",
  postgres: "PostgresEventStore",
  mysql: "MysqlEventStore",
  redis: "RedisEventStore",
};

const allKinds: readonly RacerTarget["kind"][] = ["sqlite", "postgres", "mysql", "redis"];

/**
 * Registers one test per store kind (`describe` "<Store> <topic>", `it` `test`), each on a
 * place of its own: a new SQLite file, PostgreSQL schema, MariaDB database or Redis key
 * prefix, all removed after the file's tests. A server that is unreachable skips its block
 * (with CI=true, `serverAvailable` fails the run instead). `label` names the places; `kinds`
 * narrows the stores (all four by default), for a test of what only some of them share.
 */
export async function acrossStores(
  options: { topic: string; test: string; label: string; kinds?: readonly RacerTarget["kind"][] },
  run: (target: RacerTarget) => Promise<void>,
): Promise<void> {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
  const places = freshPlaces((drop) => cleanups.push(drop));
  const targets: Record<RacerTarget["kind"], () => Promise<RacerTarget>> = {
    async sqlite() {
      const folder = mkdtempSync(join(tmpdir(), `ledger-${options.label}-`));
      cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
      return { kind: "sqlite", location: join(folder, "ledger.db") };
    },
    async postgres() {
      return {
        kind: "postgres",
        location: SERVER_URLS.postgres,
        schema: places.schema(options.label),
      };
    },
    async mysql() {
      const { url } = await places.database(options.label).create();
      return { kind: "mysql", location: url };
    },
    async redis() {
      const keyPrefix = freshPrefix(options.label);
      cleanups.push(() => deleteKeys(SERVER_URLS.redis, keyPrefix));
      return { kind: "redis", location: SERVER_URLS.redis, keyPrefix };
    },
  };
  for (const kind of options.kinds ?? allKinds) {
    const available = kind === "sqlite" || (await serverAvailable(kind));
    describe.skipIf(!available)(`${storeNames[kind]} ${options.topic}`, () => {
      it(options.test, async () => run(await targets[kind]()));
    });
  }
}
