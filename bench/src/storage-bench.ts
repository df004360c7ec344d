// Storage bill of a long conversation (§8): a 200-turn chat that re-sends its whole history on
// every call, recorded through the AI SDK adapter, against (a) the same ledger with
// compaction off and (b) LangGraph's SqliteSaver checkpointing the same conversation after
// every turn. Bytes on disk and write latency per turn, all measured in the same run.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ledgerMiddleware } from "@agent-ledger/ai-sdk";
import { type EventStore, SessionRecorder, uuidv7 } from "@agent-ledger/core";
import { PostgresEventStore } from "@agent-ledger/core/postgres";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { mulberry32, SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import type { LanguageModelV3GenerateResult, LanguageModelV3Middleware } from "@ai-sdk/provider";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage } from "@langchain/core/messages";
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { generateText, type ModelMessage, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import Database from "better-sqlite3";
import pg from "pg";
import { percentile, type Row } from "./stats.js";

const TURNS = 200;
const MESSAGE_BYTES = 2048;

// A vocabulary of ordinary support-chat words: text that compresses like real text, not like
// random bytes (which nothing compresses) or a repeated word (which everything does).
const VOCABULARY = `the order shipped yesterday with a tracking number and the customer asked
whether the parcel could be redirected to a neighbour because nobody will be home on friday
we checked the warehouse system and the carrier portal then updated the delivery address
refund policy allows returns within thirty days if the item is unused and in its original
packaging please confirm the invoice total including tax discount coupon and shipping fee
the agent looked up the account history found two previous tickets about a damaged screen
and escalated the case to a supervisor who approved a replacement at no additional cost
meanwhile the payment provider reported a temporary outage so the charge will be retried
later today our records show the subscription renews monthly on the fourteenth and can be
paused from the settings page under billing where invoices and receipts are also available`
  .split(/\s+/)
  .filter((word) => word.length > 0);

function paragraph(random: () => number, bytes: number, label: string): string {
  const words = [label];
  let length = label.length;
  while (length < bytes) {
    const word = VOCABULARY[Math.floor(random() * VOCABULARY.length)] as string;
    words.push(random() < 0.08 ? `${word}.` : word);
    length += word.length + 1;
  }
  return words.join(" ").slice(0, bytes);
}

interface Conversation {
  system: string;
  users: string[];
  answers: string[];
  uniqueBytes: number;
}

function conversation(): Conversation {
  const random = mulberry32(20_260_601);
  const system = paragraph(random, MESSAGE_BYTES, "You are the support agent of a web shop.");
  const users: string[] = [];
  const answers: string[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    users.push(paragraph(random, MESSAGE_BYTES, `Customer turn ${turn}:`));
    answers.push(paragraph(random, MESSAGE_BYTES, `Agent turn ${turn}:`));
  }
  const uniqueBytes = [system, ...users, ...answers].reduce(
    (sum, text) => sum + Buffer.byteLength(text),
    0,
  );
  return { system, users, answers, uniqueBytes };
}

function answer(text: string): LanguageModelV3GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 1000, noCache: 1000, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: 500, text: 500, reasoning: undefined },
    },
    warnings: [],
    response: { id: "resp", modelId: "bench", timestamp: new Date(1_700_000_000_000) },
  };
}

/**
 * Records the conversation through `ledgerMiddleware`; returns the ledger's own time per turn
 * (the middleware's wrapGenerate minus the model call inside it: commit of model.requested,
 * compaction, blob puts, model.completed).
 */
async function recordConversation(
  store: EventStore,
  chat: Conversation,
  compact: boolean,
): Promise<number[]> {
  const recorder = new SessionRecorder({
    store,
    sessionId: `storage-${uuidv7()}`,
    actor: { type: "agent", id: "support", framework: "ai-sdk" },
    ...(compact ? {} : { compact: false as const }),
  });
  let turn = 0;
  let modelMs = 0;
  const model = new MockLanguageModelV3({
    provider: "bench",
    modelId: "bench",
    doGenerate: async () => {
      const start = performance.now();
      const result = answer(chat.answers[turn] as string);
      modelMs = performance.now() - start;
      return result;
    },
  });
  const perTurn: number[] = [];
  // Outermost: times the ledger middleware together with the model call it wraps.
  const timer: LanguageModelV3Middleware = {
    specificationVersion: "v3",
    wrapGenerate: async ({ doGenerate }) => {
      const start = performance.now();
      const result = await doGenerate();
      perTurn.push(performance.now() - start - modelMs);
      return result;
    },
  };
  const wrapped = wrapLanguageModel({
    model,
    middleware: [timer, ledgerMiddleware({ recorder })],
  });
  const history: ModelMessage[] = [];
  for (turn = 0; turn < TURNS; turn++) {
    history.push({ role: "user", content: chat.users[turn] as string });
    const result = await generateText({
      model: wrapped,
      system: chat.system,
      messages: history,
      maxRetries: 0,
    });
    history.push({ role: "assistant", content: result.text });
  }
  await recorder.completeRun("done");
  return perTurn;
}

/** LangGraph's SqliteSaver: one checkpoint with the messages channel after every turn. */
async function checkpointConversation(path: string, chat: Conversation): Promise<number[]> {
  const saver = SqliteSaver.fromConnString(path);
  let config = { configurable: { thread_id: "storage", checkpoint_ns: "" } } as Parameters<
    typeof saver.put
  >[0];
  const messages: BaseMessage[] = [new SystemMessage(chat.system)];
  const perTurn: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    messages.push(new HumanMessage(chat.users[turn] as string));
    messages.push(new AIMessage(chat.answers[turn] as string));
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      ts: new Date().toISOString(),
      channel_values: { messages: messages.slice() },
      channel_versions: { messages: turn + 1 },
      versions_seen: {},
    };
    const start = performance.now();
    config = await saver.put(config, checkpoint, { source: "loop", step: turn, parents: {} });
    perTurn.push(performance.now() - start);
  }
  (saver as unknown as { db: Database.Database }).db.close();
  return perTurn;
}

/** Where the bytes are: event bodies (envelopes) and blob contents (compressed). */
function sqliteBreakdown(path: string): { events: number; blobs: number; blobCount: number } {
  const database = new Database(path, { readonly: true });
  try {
    const events = database
      .prepare("SELECT coalesce(sum(length(body)), 0) AS n FROM events")
      .get() as {
      n: number;
    };
    const blobs = database
      .prepare("SELECT count(*) AS c, coalesce(sum(length(content)), 0) AS n FROM blobs")
      .get() as { c: number; n: number };
    return { events: events.n, blobs: blobs.n, blobCount: blobs.c };
  } finally {
    database.close();
  }
}

/** Bytes of a SQLite database once its WAL is checkpointed into the main file. */
function sqliteBytes(path: string): number {
  const database = new Database(path);
  database.pragma("wal_checkpoint(TRUNCATE)");
  database.close();
  let bytes = statSync(path).size;
  for (const suffix of ["-wal", "-shm"]) {
    try {
      bytes += suffix === "-wal" ? statSync(path + suffix).size : 0;
    } catch {
      // absent after a clean close
    }
  }
  return bytes;
}

async function postgresBytes(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    const result = await client.query<{ bytes: string }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`,
      [schema],
    );
    return Number(result.rows[0]?.bytes ?? 0);
  } finally {
    await client.end();
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

const kb = (bytes: number) => Math.round(bytes / 102.4) / 10;
const ms = (value: number) => Math.round(value * 1000) / 1000;
const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

export async function benchStorage(): Promise<Row[]> {
  const chat = conversation();
  const folder = mkdtempSync(join(tmpdir(), "ledger-storage-bench-"));
  const rows: Row[] = [];
  try {
    const oursPath = join(folder, "ours.db");
    const ours = new SqliteEventStore({ path: oursPath });
    await ours.init();
    const oursTurns = await recordConversation(ours, chat, true);
    await ours.close();
    const offPath = join(folder, "dedup-off.db");
    const off = new SqliteEventStore({ path: offPath });
    await off.init();
    const offTurns = await recordConversation(off, chat, false);
    await off.close();
    const saverPath = join(folder, "langgraph.db");
    const saverTurns = await checkpointConversation(saverPath, chat);

    const unique = chat.uniqueBytes;
    const oursBytes = sqliteBytes(oursPath);
    const offBytes = sqliteBytes(offPath);
    const saverBytes = sqliteBytes(saverPath);
    rows.push({
      name: `unique content of the ${TURNS}-turn conversation (${2 * TURNS + 1} messages)`,
      value: kb(unique),
      unit: "KiB",
    });
    rows.push({
      name: "SQLite bytes on disk / unique content bytes",
      value: kb(oursBytes),
      unit: "KiB",
      baseline: kb(unique),
      baselineName: "unique content",
      ratio: ratio(oursBytes, unique),
      note: "target <= 1.2",
    });
    const parts = sqliteBreakdown(oursPath);
    rows.push({
      name: "  of which: event bodies (400 model events) / blob contents (compressed)",
      value: kb(parts.events),
      unit: "KiB",
      baseline: kb(parts.blobs),
      baselineName: `${parts.blobCount} blobs`,
      note: "the rest: SQLite pages, indexes, blob reference index",
    });
    rows.push({
      name: "SQLite bytes on disk vs LangGraph SqliteSaver (put after every turn)",
      value: kb(oursBytes),
      unit: "KiB",
      baseline: kb(saverBytes),
      baselineName: "SqliteSaver",
      ratio: ratio(oursBytes, saverBytes),
      note: `${Math.round(saverBytes / oursBytes)}x smaller; target >= 20x`,
    });
    rows.push({
      name: "SQLite bytes on disk vs the same ledger with compaction off",
      value: kb(oursBytes),
      unit: "KiB",
      baseline: kb(offBytes),
      baselineName: "compact: false",
      ratio: ratio(oursBytes, offBytes),
    });
    rows.push({
      name: "write latency per turn, median (ledger middleware vs SqliteSaver.put)",
      value: ms(percentile(oursTurns, 50)),
      unit: "ms",
      baseline: ms(percentile(saverTurns, 50)),
      baselineName: "SqliteSaver.put",
      ratio: ratio(percentile(oursTurns, 50), percentile(saverTurns, 50)),
      note: "ours: model.requested + model.completed, compaction and blob puts included",
    });
    rows.push({
      name: "write latency per turn, p95",
      value: ms(percentile(oursTurns, 95)),
      unit: "ms",
      baseline: ms(percentile(saverTurns, 95)),
      baselineName: "SqliteSaver.put",
      ratio: ratio(percentile(oursTurns, 95), percentile(saverTurns, 95)),
    });
    rows.push({
      name: "write time for the whole conversation (compaction off for reference)",
      value: ms(sum(oursTurns)),
      unit: "ms",
      baseline: ms(sum(saverTurns)),
      baselineName: "SqliteSaver.put",
      ratio: ratio(sum(oursTurns), sum(saverTurns)),
      note: `compact: false took ${Math.round(sum(offTurns))} ms`,
    });

    if (!(await serverAvailable("postgres"))) {
      console.error(`storage bench: PostgreSQL at ${SERVER_URLS.postgres} unreachable, skipped`);
      return rows;
    }
    const sizes: Record<string, number> = {};
    for (const compact of [true, false]) {
      const schema = `ledger_storage_${uuidv7().replaceAll("-", "")}`;
      const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      try {
        await store.init();
        await recordConversation(store, chat, compact);
        await store.close();
        sizes[String(compact)] = await postgresBytes(schema);
      } finally {
        await dropSchema(schema);
      }
    }
    const pgOurs = sizes.true ?? 0;
    rows.push({
      name: "PostgreSQL relation sizes / unique content bytes",
      value: kb(pgOurs),
      unit: "KiB",
      baseline: kb(unique),
      baselineName: "unique content",
      ratio: ratio(pgOurs, unique),
      note: "pg_total_relation_size of the store's tables (fresh schema, indexes, TOAST)",
    });
    rows.push({
      name: "PostgreSQL relation sizes vs compaction off",
      value: kb(pgOurs),
      unit: "KiB",
      baseline: kb(sizes.false ?? 0),
      baselineName: "compact: false",
      ratio: ratio(pgOurs, sizes.false ?? 1),
    });
    return rows;
  } finally {
    // LEDGER_BENCH_KEEP=1 keeps the databases for a look with sqlite3 (dbstat).
    if (process.env.LEDGER_BENCH_KEEP === "1") console.error(`storage bench files: ${folder}`);
    else rmSync(folder, { recursive: true, force: true });
  }
}
