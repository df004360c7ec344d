import mysql from "mysql2/promise";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { freshPlaces } from "./fresh-places.js";
import { SERVER_URLS, serverAvailable } from "./servers.js";

const available = (await serverAvailable("postgres")) && (await serverAvailable("mysql"));

async function schemaNames(): Promise<string[]> {
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'ledger\\_places\\_%'",
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

async function databaseNames(): Promise<string[]> {
  const connection = await mysql.createConnection({ uri: SERVER_URLS.mysql });
  try {
    const [rows] = (await connection.query("SHOW DATABASES LIKE 'ledger\\_places\\_%'")) as [
      Record<string, string>[],
      unknown,
    ];
    return rows.flatMap((row) => Object.values(row));
  } finally {
    await connection.end();
  }
}

describe.skipIf(!available)("freshPlaces", () => {
  it("names new schemas and databases, makes a database on create(), and drops them all at cleanup", async () => {
    let drop: (() => Promise<void>) | undefined;
    const places = freshPlaces((cleanup) => {
      drop = cleanup;
    });
    const schemas = [places.schema("places"), places.schema("places")];
    const made = places.database("places");
    const unmade = places.database("places");
    expect(new Set([...schemas, made.database, unmade.database]).size).toBe(4);
    expect(new URL(made.url).host).toBe(new URL(SERVER_URLS.mysql).host);
    expect(new URL(made.url).pathname).toBe(`/${made.database}`);

    const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
    await client.connect();
    await client.query(`CREATE SCHEMA "${schemas[0]}"`);
    await client.end();
    expect(await made.create("CHARACTER SET utf8mb4")).toBe(made);
    expect(await schemaNames()).toEqual([schemas[0]]);
    expect(await databaseNames()).toEqual([made.database]);

    await drop?.();
    expect(await schemaNames()).toEqual([]);
    expect(await databaseNames()).toEqual([]);
  });
});
