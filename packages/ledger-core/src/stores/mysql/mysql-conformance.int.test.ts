import mysql from "mysql2/promise";
import { afterAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { emptiedEachTime, emptyMysqlDatabase } from "../sql/testing/emptied-ledger.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;

afterAll(async () => {
  await admin?.end();
});

describe.skipIf(!available)("MysqlEventStore", () => {
  // Every case in one database, its rows deleted between cases (an empty store, the tables
  // made by the first case's init()); nothing is skipped.
  const place = places.database("conf");
  const emptied = emptiedEachTime(
    async () => (await place.create()).database,
    (name) => emptyMysqlDatabase(admin as mysql.Connection, name),
  );
  runEventStoreConformance(
    async () => {
      await emptied();
      return new MysqlEventStore({ uri: place.url });
    },
    { describe, it },
  );
});
