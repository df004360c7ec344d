import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  type NewEvent,
  SessionRecorder,
  uuidv7,
} from "@agent-ledger/core";
import { decodeBody, SqliteEventStore } from "@agent-ledger/core/sqlite";
import Database from "better-sqlite3";
import { conversationCall, conversationRow } from "./conversation.js";
import {
  alternate,
  latencyInTurns,
  median,
  percentile,
  perSecond,
  type Row,
  round,
  sample,
  timeMs,
} from "./stats.js";

const actor = { type: "agent", id: "bench" } as const;
const request = {
  model: "bench-model",
  messages: [{ role: "user", content: "What is the weather in Lisbon today?" }],
  temperature: 0,
};

/**
 * A raw better-sqlite3 file with the store's durability settings and a one-row insert
 * transaction, in its steady state. It writes one WAL frame per commit where ours writes about
 * five, so untimed writes first take its WAL past the checkpoint (1,000 frames): from then on
 * it is reused, as ours is after its warm-up, instead of growing, which makes every fsync also
 * commit the file's new size (measured: 373 µs against 177 µs for the same insert).
 */
function rawSqlite(path: string, body: string) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 10000");
  db.exec(
    "CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, body TEXT NOT NULL)",
  );
  const insert = db.prepare("INSERT INTO events (session_id, body) VALUES (?, ?)");
  const write = db.transaction((body: string) => insert.run("s", body));
  for (let index = 0; index < 1_100; index++) write.immediate(body);
  return { db, write: (body: string) => write.immediate(body) };
}

async function memoryAppend(): Promise<Row[]> {
  const store = new MemoryEventStore();
  const count = 50_000;
  const event = (index: number): NewEvent => ({
    type: "tool.completed",
    stepId: "step",
    attemptId: "attempt",
    payload: { toolCallId: `call-${index}`, result: { ok: true, value: index } },
  });
  // Warm-up: a long-running agent appends on a JIT-compiled path; measure that steady state.
  for (let index = 0; index < 20_000; index++)
    await store.append({
      sessionId: "warm",
      runId: "r",
      expectedSeq: index,
      events: [event(index)],
    });
  // Best of three rounds (each on a fresh session): the least disturbed measure of the
  // store's own cost on a machine whose other load comes and goes.
  const rounds: number[] = [];
  for (let round = 0; round < 3; round++) {
    rounds.push(
      await timeMs(async () => {
        for (let index = 0; index < count; index++)
          await store.append({
            sessionId: `s${round}`,
            runId: "r",
            expectedSeq: index,
            events: [event(index)],
          });
      }),
    );
  }
  const ms = Math.min(...rounds);
  return [
    {
      name: "memory store append, 1 event per append",
      value: (ms * 1000) / count,
      unit: "µs/event",
      note: "target < 10 µs; best of 3 rounds of 50k",
    },
  ];
}

/**
 * The floor under any SQLite ledger of this schema: the raw driver inserting the row our append
 * wrote (same body bytes) into a fresh copy of the store's tables, one durable transaction per
 * row. The three unique keys the contract needs (run position, event id, session cursor) are
 * index pages every commit writes.
 */
async function rawLedgerRow(path: string, sample: { body: unknown }) {
  const store = new SqliteEventStore({ path });
  await store.init();
  await store.close();
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  const insert = db.prepare(
    `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
     VALUES (?, ?, ?, ?, ?, 'model.requested', ?, ?)`,
  );
  const sessionId = uuidv7();
  const runId = uuidv7();
  let seq = 0;
  const write = db.transaction(() => {
    seq++;
    insert.run(sessionId, seq, runId, seq, uuidv7(), new Date().toISOString(), sample.body);
  });
  return { db, write: () => write.immediate() };
}

async function sqliteBeforeModelCall(dir: string): Promise<Row[]> {
  const body = JSON.stringify({ type: "model.requested", payload: { request } });
  const raw = rawSqlite(join(dir, "raw.db"), body);
  const store = new SqliteEventStore({ path: join(dir, "ledger.db") });
  await store.init();
  const recorder = new SessionRecorder({ store, sessionId: uuidv7(), actor });
  await recorder.startRun();
  await recorder.beforeModelCall({ request });
  const written = new Database(join(dir, "ledger.db"), { readonly: true });
  const stored = written.prepare("SELECT body FROM events ORDER BY rowid DESC LIMIT 1").get() as {
    body: unknown;
  };
  written.close();
  const floor = await rawLedgerRow(join(dir, "floor.db"), stored);
  const talk = await conversationCall(store, actor);
  // Rounds in turns, the order reversed each round, after untimed rounds of each, so drift
  // on a noisy machine (and a fresh process's first writes, slower for ours and raw alike)
  // hits all of them alike.
  const [ours, base, under, talked] = (await latencyInTurns([
    () => recorder.beforeModelCall({ request }),
    () => raw.write(body),
    () => floor.write(),
    talk,
  ])) as [number[], number[], number[], number[]];
  raw.db.close();
  floor.db.close();
  await store.close();
  const rows: Row[] = [];
  for (const p of [50, 99]) {
    const value = percentile(ours, p);
    const baseline = percentile(base, p);
    rows.push({
      name: `SQLite beforeModelCall p${p}`,
      value,
      unit: "µs",
      baseline,
      baselineName: "raw better-sqlite3 durable 1-row insert txn",
      ratio: value / baseline,
      note: p === 50 ? "target <= 1.2x" : "",
    });
  }
  const floorP50 = percentile(under, 50);
  const baseP50 = percentile(base, 50);
  rows.push({
    name: "  floor: raw driver, the same row into the ledger's tables, p50",
    value: floorP50,
    unit: "µs",
    baseline: baseP50,
    baselineName: "raw better-sqlite3 durable 1-row insert txn",
    ratio: floorP50 / baseP50,
    note: "no ledger code: what the schema's 3 unique keys cost",
  });
  rows.push(conversationRow("SQLite", talked, base, "raw better-sqlite3 durable 1-row insert txn"));
  return rows;
}

async function sqliteGroupCommit(dir: string): Promise<Row[]> {
  const body = JSON.stringify({
    type: "tool.requested",
    payload: { name: "lookup", args: { city: "Lisbon" } },
  });
  const raw = rawSqlite(join(dir, "raw-group.db"), body);
  const store = new SqliteEventStore({ path: join(dir, "group.db") });
  await store.init();
  const recorder = new SessionRecorder({ store, sessionId: uuidv7(), actor });
  await recorder.startRun();
  // Events per second of one round: 25 times 8 parallel tool calls, or 200 raw transactions.
  const perRound = 200;
  let call = 0;
  const oursRound = () =>
    perSecond(perRound, async () => {
      for (let round = 0; round < perRound / 8; round++) {
        await Promise.all(
          Array.from({ length: 8 }, () =>
            recorder.beforeToolCall({
              toolCallId: `call-${call++}`,
              name: "lookup",
              args: { city: "Lisbon" },
            }),
          ),
        );
      }
    });
  const rawRound = () =>
    perSecond(perRound, () => {
      for (let index = 0; index < perRound; index++) raw.write(body);
    });
  const [oursRates, baseRates] = await alternate([oursRound, rawRound], { rounds: 6, warmup: 10 });
  raw.db.close();
  await store.close();
  const ours = median(oursRates ?? []);
  const baseline = median(baseRates ?? []);
  return [
    {
      name: "SQLite 8 concurrent beforeToolCall (group commit)",
      value: ours,
      unit: "events/s",
      baseline,
      baselineName: "raw 1 txn per event",
      ratio: ours / baseline,
      note: "higher is better; median of 6 rounds",
    },
  ];
}

/** A session of `count` events shaped like an agent's: model and tool attempts, in batches. */
async function fillSession(store: EventStore, sessionId: string, count: number): Promise<void> {
  const runId = "run";
  let seq = 0;
  const events: NewEvent[] = [{ type: "run.started", actor, payload: { task: "bench" } }];
  let step = 0;
  while (seq + events.length < count) {
    const batch = events.splice(0);
    while (batch.length < 400 && seq + batch.length < count) {
      const stepId = `step-${step}`;
      const attemptId = `attempt-${step++}`;
      const kind = step % 2 === 0 ? "model" : "tool";
      batch.push(
        {
          type: `${kind}.requested`,
          stepId,
          attemptId,
          actor,
          payload:
            kind === "model"
              ? { request, requestHash: "x" }
              : {
                  toolCallId: `c${step}`,
                  name: "lookup",
                  args: { city: "Lisbon" },
                  effect: { kind: "read", idempotent: true },
                  requestHash: "y",
                },
        },
        {
          type: `${kind}.completed`,
          stepId,
          attemptId,
          actor,
          payload:
            kind === "model"
              ? { response: { text: "sunny", usage: { inputTokens: 10, outputTokens: 3 } } }
              : { toolCallId: `c${step}`, result: "sunny" },
        },
      );
    }
    const result = await store.append({
      sessionId,
      runId,
      expectedSeq: seq,
      events: batch.slice(0, count - seq),
    });
    seq += result.events.length;
  }
}

async function sqliteInspect(dir: string): Promise<Row[]> {
  const path = join(dir, "inspect.db");
  const store = new SqliteEventStore({ path });
  await store.init();
  await fillSession(store, "small", 10_000);
  await fillSession(store, "large", 100_000);
  const raw = new Database(path, { readonly: true });
  const select = raw.prepare("SELECT body FROM events WHERE session_id = ? ORDER BY commit_cursor");
  const rawRead = (sessionId: string) => {
    let parsed = 0;
    // A long body is stored compressed (a BLOB): decoding it is part of reading the file.
    for (const row of select.iterate(sessionId) as Iterable<{ body: unknown }>)
      if (JSON.parse(decodeBody(row.body))) parsed++;
    return parsed;
  };
  const best = async (fn: () => unknown) =>
    Math.min(...(await sample(5, 1, fn)).map((us) => us / 1000));
  const ours100 = await best(() => inspectSession(store, "large"));
  const raw100 = await best(() => rawRead("large"));
  const ours10 = await best(() => inspectSession(store, "small"));
  const raw10 = await best(() => rawRead("small"));
  raw.close();
  await store.close();
  return [
    {
      name: "inspectSession, 100k events (SQLite)",
      value: 100_000 / (ours100 / 1000),
      unit: "events/s",
      baseline: 100_000 / (raw100 / 1000),
      baselineName: "raw SELECT + JSON.parse",
      ratio: raw100 / ours100,
      note: "rate ratio, target >= 0.6x",
    },
    {
      // The raw read's own growth, measured alike, shows what the machine adds to 10x (a 10k
      // read lasts a fifth of a second, so a noisy minute moves it most).
      name: "inspectSession time 100k / 10k",
      value: ours100 / ours10,
      unit: "x",
      baseline: raw100 / raw10,
      baselineName: "raw SELECT + JSON.parse, 100k / 10k",
      ratio: ours100 / ours10 / (raw100 / raw10),
      note: `${round(ours10)} ms vs ${round(ours100)} ms; linear = 10x`,
    },
  ];
}

export async function benchCore(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "agent-ledger-bench-"));
  try {
    return [
      ...(await memoryAppend()),
      ...(await sqliteBeforeModelCall(dir)),
      ...(await sqliteGroupCommit(dir)),
      ...(await sqliteInspect(dir)),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
