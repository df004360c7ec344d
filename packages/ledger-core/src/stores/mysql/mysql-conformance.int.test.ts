import mysql from "mysql2/promise";
import { afterAll, describe, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const databases: string[] = [];
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;

afterAll(async () => {
  for (const database of databases) await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin?.end();
});

/** A URI of the test server pointing at `database`. */
function uriFor(database: string): string {
  const url = new URL(SERVER_URLS.mysql);
  url.pathname = `/${database}`;
  return url.toString();
}

describe.skipIf(!available)("MysqlEventStore", () => {
  // Each case gets a fresh database; nothing is skipped.
  runEventStoreConformance(
    async () => {
      const database = `ledger_conf_${uuidv7().replaceAll("-", "")}`;
      databases.push(database);
      await admin?.query(`CREATE DATABASE \`${database}\``);
      return new MysqlEventStore({ uri: uriFor(database) });
    },
    { describe, it },
  );
});
