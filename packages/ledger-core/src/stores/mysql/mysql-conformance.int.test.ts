import mysql from "mysql2/promise";
import { afterAll, describe, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { emptiedEachTime, emptyMysqlDatabase } from "../sql/testing/emptied-ledger.js";
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

/** A new database, dropped after the file's tests. */
async function freshDatabase(): Promise<string> {
  const database = `ledger_conf_${uuidv7().replaceAll("-", "")}`;
  databases.push(database);
  await admin?.query(`CREATE DATABASE \`${database}\``);
  return database;
}

describe.skipIf(!available)("MysqlEventStore", () => {
  // Every case in one database, its rows deleted between cases (an empty store, the tables
  // made by the first case's init()); nothing is skipped.
  const database = emptiedEachTime(freshDatabase, (name) =>
    emptyMysqlDatabase(admin as mysql.Connection, name),
  );
  runEventStoreConformance(async () => new MysqlEventStore({ uri: uriFor(await database()) }), {
    describe,
    it,
  });
});
