import { randomUUID } from "node:crypto";
import { freshPlaces, SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, expect } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
// Its own database (named in the URL, as a user's CLI reaches it), dropped after.
const ledger = places.database("cli");
const { database, url: storeUrl } = ledger;
/** An empty database, where no command may make a table. */
const empty = places.database("cli_none");
/** A database that is never made. */
const missing = places.database("cli_missing");
/** A user that may only read the ledger's database (made once the ledger is there). */
const reader = `ro_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
/** A user granted no database: the server refuses it one that does not exist as one it may not use. */
const stranger = `st_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
const readerUrl = (() => {
  const url = new URL(storeUrl);
  url.username = reader;
  url.password = "reader-pw";
  return url.toString();
})();

async function admin<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection(SERVER_URLS.mysql);
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

beforeAll(async () => {
  if (!available) return;
  for (const place of [ledger, empty]) await place.create();
  await admin((connection) =>
    connection.query(`CREATE USER '${stranger}'@'%' IDENTIFIED BY 'stranger-pw'`),
  );
});
afterAll(async () => {
  if (!available) return;
  for (const user of [reader, stranger])
    await admin((connection) => connection.query(`DROP USER IF EXISTS '${user}'@'%'`));
});

describeCliCommands({
  skip: !available,
  name: "MariaDB",
  storeUrl,
  sessionId: `cli-mysql-${randomUUID()}`,
  async tamper({ sessionId, runId, seq }) {
    const [result] = await admin((connection) =>
      connection.query(
        `UPDATE \`${database}\`.events SET body = REPLACE(body, 'Book a table', 'Book a TABLE') WHERE session_id = ? AND run_id = ? AND seq = ?`,
        [sessionId, runId, seq],
      ),
    );
    expect((result as mysql.ResultSetHeader).affectedRows).toBe(1);
  },
  readOnly: {
    storeUrl: readerUrl,
    refusal: /append failed: [A-Z, ]+ command denied to user/,
    async grant() {
      await admin(async (connection) => {
        await connection.query(`CREATE USER '${reader}'@'%' IDENTIFIED BY 'reader-pw'`);
        await connection.query(`GRANT SELECT ON \`${database}\`.* TO '${reader}'@'%'`);
      });
    },
  },
  refused: {
    noDatabase: missing.url,
    noDatabaseForUser: () => {
      const url = new URL(missing.url);
      url.username = stranger;
      url.password = "stranger-pw";
      return url.toString();
    },
    badCredentials: (() => {
      const url = new URL(storeUrl);
      url.username = `no_${reader}`;
      url.password = "wrong-pw";
      return url.toString();
    })(),
  },
  noLedger: {
    storeUrl: empty.url,
    leftovers: async () => {
      const [tables] = await admin((connection) =>
        connection.query("SELECT 1 FROM information_schema.tables WHERE table_schema = ?", [
          empty.database,
        ]),
      );
      return (tables as unknown[]).length;
    },
  },
});
