import { createServer, type Server, type Socket } from "node:net";
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { AppendRequest, EventStore } from "../store/event-store.js";
import { MysqlEventStore } from "./mysql/mysql-store.js";
import { PostgresEventStore } from "./postgres/postgres-store.js";

// An append that never got a connection sent nothing: the store says so (`nothingWritten`),
// and a recorder may record an outcome again instead of holding it as perhaps stored. No
// server is needed: a closed port refuses, a listener that never answers holds the connect.

const sockets = new Set<Socket>();
const silent: Server = createServer((socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});
/** Ends the connections the silent listener holds: a pool's pending connect then fails. */
function hangUp(): void {
  for (const socket of sockets) socket.destroy();
}
afterAll(async () => {
  hangUp();
  await new Promise((resolve) => silent.close(resolve));
});

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port));
  });
}

/** A port nothing listens on (it was free a moment ago): connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const append: AppendRequest = {
  sessionId: "s",
  runId: "r",
  expectedSeq: 0,
  events: [{ type: "run.started" }],
};

async function refusal(store: EventStore): Promise<unknown> {
  try {
    return await store.append(append).then(
      () => undefined,
      (error: unknown) => error,
    );
  } finally {
    await store.close().catch(() => {});
  }
}

const silentPort = await listen(silent);

describe("an append that never had a connection says it wrote nothing", () => {
  it("PostgreSQL: connection refused", async () => {
    const url = `postgres://ledger@127.0.0.1:${await closedPort()}/ledger`;
    const error = await refusal(new PostgresEventStore({ connectionString: url, timeoutMs: 2000 }));
    expect(error).toMatchObject({ code: "store-unavailable", nothingWritten: true });
  });

  it("PostgreSQL: no connection within the bound (the store's pool, and the application's)", async () => {
    const url = `postgres://ledger@127.0.0.1:${silentPort}/ledger`;
    const owned = await refusal(new PostgresEventStore({ connectionString: url, timeoutMs: 200 }));
    expect(owned).toMatchObject({ code: "store-unavailable", nothingWritten: true });
    const pool = new pg.Pool({ connectionString: url });
    const given = await refusal(new PostgresEventStore({ pool, timeoutMs: 200 }));
    expect(given).toMatchObject({ code: "store-unavailable", nothingWritten: true });
    expect((given as Error).message).toContain("none free in the pool");
    hangUp();
    await pool.end().catch(() => {});
  });

  it("MySQL: connection refused", async () => {
    const uri = `mysql://ledger@127.0.0.1:${await closedPort()}/ledger`;
    const error = await refusal(new MysqlEventStore({ uri, timeoutMs: 2000 }));
    expect(error).toMatchObject({ code: "store-unavailable", nothingWritten: true });
  });

  it("MySQL: no connection within the bound (the store's pool, and the application's)", async () => {
    const uri = `mysql://ledger@127.0.0.1:${silentPort}/ledger`;
    const owned = await refusal(new MysqlEventStore({ uri, timeoutMs: 200 }));
    expect(owned).toMatchObject({ code: "store-unavailable", nothingWritten: true });
    const pool = mysql.createPool({ uri, connectTimeout: 10_000 });
    const given = await refusal(new MysqlEventStore({ pool, timeoutMs: 200 }));
    expect(given).toMatchObject({ code: "store-unavailable", nothingWritten: true });
    expect((given as Error).message).toContain("none free in the pool");
    hangUp();
    await pool.end().catch(() => {});
  });
});
