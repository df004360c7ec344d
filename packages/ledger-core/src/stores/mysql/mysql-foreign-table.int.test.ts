import mysql from "mysql2/promise";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../store/open-store.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "./mysql-store.js";

// Another application's table of a name the ledger uses, in the database the store URL names:
// init() must refuse it before it writes anything, also when the table is empty (an empty
// table of ours is what a migrator killed half way leaves; an empty table of theirs is not).

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;
afterAll(async () => {
  await admin?.end();
});

/** The tables of `database`, by name. */
async function tablesOf(database: string): Promise<string[]> {
  const [tables] = (await (admin as mysql.Connection).query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? ORDER BY 1",
    [database],
  )) as unknown as [{ name: string }[]];
  return tables.map((table) => table.name);
}

describe.skipIf(!available)(
  "MysqlEventStore on a database holding another application's table",
  () => {
    it("refuses express-mysql-session's empty sessions table before writing anything", async () => {
      const { database, url } = await places.database("foreign").create();
      // express-mysql-session's own table, as it makes it.
      await (admin as mysql.Connection).query(
        `CREATE TABLE \`${database}\`.sessions (session_id varchar(128) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY, expires int(11) unsigned NOT NULL, data mediumtext COLLATE utf8mb4_bin)`,
      );
      await expect(openStore(url)).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringMatching(/table sessions .*a database of its own/),
      });
      const store = new MysqlEventStore({ uri: url });
      try {
        await expect(store.init()).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.uri",
          details: { table: "sessions" },
        });
      } finally {
        await store.close();
      }
      // No schema_version, no other table: the database is as it was.
      expect(await tablesOf(database)).toEqual(["sessions"]);
    });

    it("refuses another tool's schema_version table (Flyway 4's), not taking it for a ledger's versions", async () => {
      const { database, url } = await places.database("foreign").create();
      await (admin as mysql.Connection).query(
        `CREATE TABLE \`${database}\`.schema_version (installed_rank int PRIMARY KEY, version varchar(50), description varchar(200) NOT NULL)`,
      );
      await (admin as mysql.Connection).query(
        `INSERT INTO \`${database}\`.schema_version VALUES (1, '1.2', 'init')`,
      );
      for (const create of [true, false])
        await expect(openStore(url, { create })).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          message: expect.stringContaining("table schema_version"),
        });
      expect(await tablesOf(database)).toEqual(["schema_version"]);
    });

    it("refuses a table named like one a later migration makes, where no ledger is", async () => {
      const { database, url } = await places.database("foreign").create();
      await (admin as mysql.Connection).query(
        `CREATE TABLE \`${database}\`.blob_refs (id int PRIMARY KEY)`,
      );
      await expect(openStore(url)).rejects.toMatchObject({
        code: "invalid-argument",
        message: expect.stringContaining("blob_refs"),
      });
      expect(await tablesOf(database)).toEqual(["blob_refs"]);
    });
  },
);
