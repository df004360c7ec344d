import { decodeBlob } from "../store/blob.js";
import { decodeBody } from "../stores/sqlite/body-codec.js";

/**
 * Finds a string anywhere in what a store persisted, for redaction tests: every column of
 * every table (SQLite, PostgreSQL) or every key and value under a prefix (Redis). Blob
 * contents and compressed SQLite event bodies are decoded first (compression would hide the
 * string from a byte scan), and the secret is looked for as base64 too (`base64Forms`). Returns
 * where it was found (empty: nowhere). Drivers are loaded on demand.
 */
export interface SecretHit {
  where: string;
}

function textOf(table: string, row: Record<string, unknown>, column: string): string {
  const value = row[column];
  if (value instanceof Uint8Array) {
    const ref =
      row.digest instanceof Uint8Array
        ? `sha256:${Buffer.from(row.digest).toString("hex")}`
        : row.blob_ref;
    if (table === "blobs" && column === "content" && typeof ref === "string")
      return new TextDecoder().decode(decodeBlob(ref, value));
    // SQLite keeps a long event body compressed (stores/sqlite/body-codec.ts).
    if (table === "events" && column === "body") return decodeBody(value);
    return Buffer.from(value).toString("latin1") + new TextDecoder().decode(value);
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * The secret as it reads inside base64 text, at each of the three byte offsets it may start at
 * (the characters mixing its first or last bytes with its neighbours' left out): adapters keep
 * some bytes as base64 in a payload (the LangGraph saver's checkpoints), out of a plain search.
 */
export function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, "utf8");
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString("base64");
    const start = offset === 0 ? 0 : 4;
    const end = Math.floor((offset + bytes.length) / 3) * 4;
    if (end - start >= 8) forms.push(text.slice(start, end));
  }
  return forms;
}

function scanRows(
  table: string,
  rows: Record<string, unknown>[],
  secret: string,
  hits: SecretHit[],
): void {
  const forms = [secret, ...base64Forms(secret)];
  for (const [index, row] of rows.entries())
    for (const column of Object.keys(row)) {
      const text = textOf(table, row, column);
      if (forms.some((form) => text.includes(form)))
        hits.push({ where: `${table}[${index}].${column}` });
    }
}

/** Scans every table of a SQLite database file (and its WAL, after a checkpoint). */
export async function scanSqliteForSecret(path: string, secret: string): Promise<SecretHit[]> {
  const { default: Database } = await import("better-sqlite3");
  const database = new Database(path);
  try {
    database.pragma("wal_checkpoint(TRUNCATE)");
    const hits: SecretHit[] = [];
    const tables = database
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all() as { name: string }[];
    for (const { name } of tables) {
      const rows = database.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      scanRows(name, rows, secret, hits);
    }
    return hits;
  } finally {
    database.close();
  }
}

/** Scans every table of a PostgreSQL schema. */
export async function scanPostgresForSecret(
  connectionString: string,
  schema: string,
  secret: string,
): Promise<SecretHit[]> {
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const hits: SecretHit[] = [];
    const tables = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1",
      [schema],
    );
    for (const { name } of tables.rows) {
      const rows = await client.query(`SELECT * FROM "${schema}"."${name}"`);
      scanRows(name, rows.rows, secret, hits);
    }
    return hits;
  } finally {
    await client.end();
  }
}

/** Scans every key name and value under a Redis key prefix. */
export async function scanRedisForSecret(
  url: string,
  prefix: string,
  secret: string,
): Promise<SecretHit[]> {
  const { Redis } = await import("ioredis");
  const client = new Redis(url, { lazyConnect: true });
  try {
    const hits: SecretHit[] = [];
    const forms = [secret, ...base64Forms(secret)];
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        if (key.includes(secret)) hits.push({ where: `key ${key}` });
        const type = await client.type(key);
        let values: string[] = [];
        if (type === "string") {
          const bytes = (await client.getBuffer(key)) ?? Buffer.alloc(0);
          const blob = /blob:\{([0-9a-f]{64})\}$/.exec(key);
          values = [
            blob
              ? new TextDecoder().decode(decodeBlob(`sha256:${blob[1]}`, bytes))
              : bytes.toString("utf8"),
          ];
        } else if (type === "list") values = await client.lrange(key, 0, -1);
        else if (type === "hash") values = Object.entries(await client.hgetall(key)).flat();
        else if (type === "set") values = await client.smembers(key);
        else if (type === "zset") values = await client.zrange(key, 0, -1);
        if (values.some((value) => forms.some((form) => value.includes(form))))
          hits.push({ where: key });
      }
    } while (cursor !== "0");
    return hits;
  } finally {
    client.disconnect();
  }
}
