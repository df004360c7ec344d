import { type EventStore, SessionRecorder, uuidv7 } from "@agent-ledger/core";
import { MysqlEventStore } from "@agent-ledger/core/mysql";
import { PostgresEventStore } from "@agent-ledger/core/postgres";
import { RedisEventStore } from "@agent-ledger/core/redis";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import { Redis } from "ioredis";
import mysql from "mysql2/promise";
import pg from "pg";
import { conversationCall, conversationRow } from "./conversation.js";
import { settle } from "./settle.js";
import { alternate, latencyInTurns, median, percentile, perSecond, type Row } from "./stats.js";

const actor = { type: "agent", id: "bench" } as const;
const request = {
  model: "bench-model",
  messages: [{ role: "user", content: "What is the weather in Lisbon today?" }],
  temperature: 0,
};
const body = JSON.stringify({ type: "model.requested", payload: { request } });
const WRITERS = 8;
/** Writes per writer in one round; rounds alternate ours and raw (see `alternate`). */
const PER_WRITER = 150;
const ROUNDS = 8;
/**
 * Untimed rounds of each first (6,000 writes each). A fresh process writes several times
 * slower for its first few thousand writes, the raw driver too, while V8 compiles the hot
 * paths on a helper thread that takes the core the server needs (measured, Redis, rounds of
 * 1,000 calls: ours 255 µs p50 and 397 µs of process CPU per call in the first round, 90 µs
 * and 76 µs from the sixth; raw 128 µs and 280 µs, then 48 µs and 51 µs). An agent that runs
 * for hours lives in the steady state, which the ratios are about.
 */
const WARMUP_ROUNDS = 5;

/** The raw driver doing the same durable single-row write the ledger's append does. */
interface RawWriter {
  write(session: string): Promise<unknown>;
  close(): Promise<void>;
}

/** A write with no ledger code around it, made from one real call of the ledger's. */
type Floor = (call: () => Promise<unknown>) => Promise<() => Promise<unknown>>;

interface Target {
  name: string;
  kind: "postgres" | "mysql" | "redis";
  makeStore(): Promise<{ store: EventStore; drop(): Promise<void>; floor?: Floor }>;
  makeRaw(): Promise<RawWriter>;
}

const suffix = () => `bench_${uuidv7().replace(/-/g, "").slice(-12)}`;

const targets: Target[] = [
  {
    name: "PostgreSQL",
    kind: "postgres",
    async makeStore() {
      const schema = suffix();
      const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: WRITERS + 2 });
      const store = new PostgresEventStore({ pool, schema });
      await store.init();
      return {
        store,
        async drop() {
          await store.close();
          await pool.query(`DROP SCHEMA ${schema} CASCADE`);
          await pool.end();
        },
      };
    },
    async makeRaw() {
      const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: WRITERS + 2 });
      const table = suffix();
      await pool.query(
        `CREATE TABLE ${table} (id bigserial PRIMARY KEY, session_id text NOT NULL, body text NOT NULL)`,
      );
      return {
        async write(session) {
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            await client.query(`INSERT INTO ${table} (session_id, body) VALUES ($1, $2)`, [
              session,
              body,
            ]);
            await client.query("COMMIT");
          } finally {
            client.release();
          }
        },
        async close() {
          await pool.query(`DROP TABLE ${table}`);
          await pool.end();
        },
      };
    },
  },
  {
    name: "MariaDB",
    kind: "mysql",
    async makeStore() {
      const database = suffix();
      const admin = await mysql.createConnection(SERVER_URLS.mysql);
      await admin.query(`CREATE DATABASE ${database}`);
      const pool = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: WRITERS + 2 });
      const store = new MysqlEventStore({ pool, database });
      await store.init();
      return {
        store,
        async drop() {
          await store.close();
          await pool.end();
          await admin.query(`DROP DATABASE ${database}`);
          await admin.end();
        },
      };
    },
    async makeRaw() {
      const pool = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: WRITERS + 2 });
      const table = suffix();
      await pool.query(
        `CREATE TABLE ${table} (id BIGINT UNSIGNED AUTO_INCREMENT PRIMARY KEY, session_id VARCHAR(255) NOT NULL, body LONGTEXT NOT NULL) ENGINE=InnoDB`,
      );
      return {
        async write(session) {
          const connection = await pool.getConnection();
          try {
            await connection.beginTransaction();
            await connection.query(`INSERT INTO ${table} (session_id, body) VALUES (?, ?)`, [
              session,
              body,
            ]);
            await connection.commit();
          } finally {
            connection.release();
          }
        },
        async close() {
          await pool.query(`DROP TABLE ${table}`);
          await pool.end();
        },
      };
    },
  },
  {
    name: "Redis",
    kind: "redis",
    async makeStore() {
      const keyPrefix = `${suffix()}:`;
      const client = new Redis(SERVER_URLS.redis, {
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
      });
      const store = new RedisEventStore({ client, keyPrefix });
      await store.init();
      return {
        store,
        floor: (call) => redisScriptFloor(client, keyPrefix, call),
        async drop() {
          await store.close();
          let cursor = "0";
          do {
            const [next, keys] = await client.scan(cursor, "MATCH", `${keyPrefix}*`, "COUNT", 1000);
            cursor = next;
            if (keys.length > 0) await client.del(...keys);
          } while (cursor !== "0");
          client.disconnect();
        },
      };
    },
    async makeRaw() {
      const client = new Redis(SERVER_URLS.redis);
      const prefix = suffix();
      return {
        // The same atomic unit as an append: the event pushed and the session counter bumped.
        async write(session) {
          await client
            .multi()
            .rpush(`${prefix}:{${session}}:log`, body)
            .hincrby(`${prefix}:{${session}}:meta`, "cursor", 1)
            .exec();
        },
        async close() {
          const keys = await client.keys(`${prefix}:*`);
          if (keys.length > 0) await client.del(...keys);
          client.disconnect();
        },
      };
    },
  },
];

/**
 * The floor under a Redis append: the store's own append script, sent by ioredis with an event
 * planned beforehand, so no ledger code runs per call. `call` (a recorded model call) is run
 * once to capture the script call the store sends; each floor call then appends that event's
 * JSON to a run of its own under another prefix, with fresh ids and the head it expects.
 * Argument positions are the script's ARGV layout (stores/redis/scripts.ts).
 */
async function redisScriptFloor(
  client: Redis,
  keyPrefix: string,
  call: () => Promise<unknown>,
): Promise<() => Promise<unknown>> {
  type Evalsha = (...args: (string | number)[]) => Promise<unknown>;
  const sender = client as unknown as { evalsha: Evalsha };
  const original = sender.evalsha;
  let captured: (string | number)[] | undefined;
  sender.evalsha = (...args) => {
    // evalsha(sha, 6, [...6 keys, mode, ...]) (runScript passes keys and arguments as one
    // array): the first write of the call.
    const keysAndArgs = args[2] as unknown as (string | number)[];
    if (Array.isArray(keysAndArgs) && keysAndArgs[6] === "write")
      captured ??= [args[0] as string, args[1] as number, ...keysAndArgs];
    return original.apply(client, args);
  };
  try {
    await call();
  } finally {
    sender.evalsha = original;
  }
  if (captured === undefined || captured[9] !== 1)
    throw new Error("the Redis store sent no one-event append script to capture");
  const [sha, numKeys, ...rest] = captured;
  const floorPrefix = `${keyPrefix}floor:`;
  const keys = rest.slice(0, 6).map((key) => floorPrefix + String(key).slice(keyPrefix.length));
  const eventJson = rest[6 + 14] as string;
  const hash = (length: number) => (length === 0 ? "" : length.toString(16).padStart(64, "0"));
  let length = 0;
  return async () => {
    const reply = (await original.call(
      client,
      sha as string,
      numKeys as number,
      ...keys,
      "write",
      1,
      length,
      hash(length),
      ...rest.slice(6 + 4, 6 + 8),
      "running",
      hash(length + 1),
      "",
      0,
      0,
      JSON.stringify(`floor-${length}`),
      eventJson,
    )) as unknown[];
    if (reply[0] !== "ok") throw new Error(`the floor's append script refused: ${reply[0]}`);
    length++;
  };
}

async function latency(target: Target): Promise<Row[]> {
  const { store, drop, floor } = await target.makeStore();
  const raw = await target.makeRaw();
  try {
    const recorder = new SessionRecorder({ store, sessionId: uuidv7(), actor });
    await recorder.startRun();
    const session = uuidv7();
    const floorCall = await floor?.(() => recorder.beforeModelCall({ request }));
    const talk = await conversationCall(store, actor);
    const [ours, base, talked, under] = (await latencyInTurns([
      () => recorder.beforeModelCall({ request }),
      () => raw.write(session),
      talk,
      ...(floorCall === undefined ? [] : [floorCall]),
    ])) as [number[], number[], number[], number[] | undefined];
    const rows: Row[] = [50, 99].map((p) => {
      const value = percentile(ours, p);
      const baseline = percentile(base, p);
      return {
        name: `${target.name} beforeModelCall p${p}`,
        value,
        unit: "µs",
        baseline,
        baselineName: "raw driver, same 1-row write txn",
        ratio: value / baseline,
        note: p === 50 ? "target <= 1.3x" : "",
      };
    });
    rows.push(conversationRow(target.name, talked, base, "raw driver, same 1-row write txn"));
    if (under !== undefined) {
      const baseline = percentile(base, 50);
      rows.push({
        name: `  floor: ${target.name} append script alone, p50`,
        value: percentile(under, 50),
        unit: "µs",
        baseline,
        baselineName: "raw driver, same 1-row write txn",
        ratio: percentile(under, 50) / baseline,
        note: "the store's script with a pre-planned event: no ledger code per call",
      });
    }
    return rows;
  } finally {
    await raw.close();
    await drop();
  }
}

async function throughput(target: Target, oneSession: boolean): Promise<Row> {
  const { store, drop } = await target.makeStore();
  const raw = await target.makeRaw();
  try {
    const shared = uuidv7();
    const recorders = Array.from(
      { length: WRITERS },
      () => new SessionRecorder({ store, sessionId: oneSession ? shared : uuidv7(), actor }),
    );
    await Promise.all(recorders.map((recorder) => recorder.startRun()));
    // Events per second of one round: WRITERS writers, each `count` writes in a row.
    const ours = (count: number) =>
      perSecond(WRITERS * count, () =>
        Promise.all(
          recorders.map(async (recorder) => {
            for (let index = 0; index < count; index++) await recorder.beforeModelCall({ request });
          }),
        ),
      );
    const base = (count: number) =>
      perSecond(WRITERS * count, () =>
        Promise.all(
          Array.from({ length: WRITERS }, async (_, writer) => {
            const session = oneSession ? shared : `raw-${writer}`;
            for (let index = 0; index < count; index++) await raw.write(session);
          }),
        ),
      );
    // Warm-up rounds of both (JIT, pools, server caches, the VM's own ramp), then rounds
    // taken in turns, the order reversed each round, so drift hits both alike; the medians
    // are compared.
    const [oursAll, baseAll] = await alternate([() => ours(PER_WRITER), () => base(PER_WRITER)], {
      rounds: ROUNDS,
      warmup: WARMUP_ROUNDS,
    });
    const oursRates = oursAll ?? [];
    const baseRates = baseAll ?? [];
    const ratios = oursRates.map((rate, round) => rate / (baseRates[round] as number));
    const spread = `rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x`;
    const value = median(oursRates);
    const baseline = median(baseRates);
    return {
      name: `${target.name} 8 writers, ${oneSession ? "one session (8 runs)" : "8 sessions"}`,
      value,
      unit: "events/s",
      baseline,
      baselineName: "8 raw writers",
      ratio: value / baseline,
      note: oneSession
        ? `one session: its cursor row serialises commits; the store group-commits them; ${spread}`
        : `target >= 0.8x; median of ${ROUNDS} rounds after ${WARMUP_ROUNDS} untimed, ${spread}`,
    };
  } finally {
    await raw.close();
    await drop();
  }
}

/** `BENCH_SERVERS=postgres,redis` limits the suite to those servers (default: all three). */
const only = process.env.BENCH_SERVERS?.split(",").map((name) => name.trim().toLowerCase());

export async function benchServers(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const target of targets) {
    if (
      only !== undefined &&
      !only.includes(target.kind) &&
      !only.includes(target.name.toLowerCase())
    )
      continue;
    let available = false;
    try {
      available = await serverAvailable(target.kind);
    } catch (error) {
      console.error(String(error));
    }
    if (!available) {
      rows.push({
        name: `${target.name}: skipped (server unreachable)`,
        value: Number.NaN,
        unit: "",
      });
      continue;
    }
    console.error(`  ${target.name} ...`);
    await settle();
    rows.push(...(await latency(target)));
    rows.push(await throughput(target, false));
    rows.push(await throughput(target, true));
  }
  return rows;
}
