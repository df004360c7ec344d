import { uuidv7 } from "../events/ids.js";
import { SERVER_URLS, serverAvailable } from "./servers.js";

/** A MariaDB database that `FreshPlaces.database` named. */
export interface FreshDatabase {
  database: string;
  /** The test server's URL with the database as its path. */
  url: string;
  /** Makes the database (`options` as in CREATE DATABASE, after its name); answers it. */
  create(options?: string): Promise<FreshDatabase>;
}

/** Places of their own on the test servers, for one test file; see `freshPlaces`. */
export interface FreshPlaces {
  /** A new PostgreSQL schema's name (`ledger_<label>_<id>`): a store's init() makes it. */
  schema(label: string): string;
  /**
   * A new MariaDB database's name and URL (`ledger_<label>_<id>`), made by its `create()`: at
   * once, or in a before-hook, where a run that filters the file's tests out makes none.
   */
  database(label: string): FreshDatabase;
}

/**
 * Schemas and databases for a test file's stores, on the servers of `SERVER_URLS`, that no
 * other file or run touches: each named anew, and all dropped (with what they hold) when
 * `cleanup` runs the function it is handed. Pass the runner's `afterAll`, or a list of the
 * file's cleanups that runs after the stores are closed. A schema is dropped only if the
 * server is there (under CI=true, where it must be, `serverAvailable` fails the run). The
 * drivers are loaded when used.
 */
export function freshPlaces(cleanup: (drop: () => Promise<void>) => unknown): FreshPlaces {
  const schemas: string[] = [];
  const databases: string[] = [];
  cleanup(async () => {
    if (schemas.length > 0 && (await serverAvailable("postgres"))) {
      await onPostgres(schemas.map((schema) => `DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    }
    await onMysql(databases.map((database) => `DROP DATABASE IF EXISTS \`${database}\``));
  });
  const unique = (label: string) => `ledger_${label}_${uuidv7().replaceAll("-", "")}`;
  return {
    schema(label) {
      const schema = unique(label);
      schemas.push(schema);
      return schema;
    },
    database(label) {
      const database = unique(label);
      const url = new URL(SERVER_URLS.mysql);
      url.pathname = `/${database}`;
      const place: FreshDatabase = {
        database,
        url: url.toString(),
        async create(options = "") {
          await onMysql([`CREATE DATABASE \`${database}\` ${options}`]);
          databases.push(database);
          return place;
        },
      };
      return place;
    },
  };
}

async function onPostgres(statements: string[]): Promise<void> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

async function onMysql(statements: string[]): Promise<void> {
  if (statements.length === 0) return;
  const { default: mysql } = await import("mysql2/promise");
  const connection = await mysql.createConnection({ uri: SERVER_URLS.mysql });
  try {
    for (const statement of statements) await connection.query(statement);
  } finally {
    await connection.end();
  }
}
