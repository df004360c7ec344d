// A crash child for subgraph-crash.test.ts: runs the supervisor graph of subgraph.test.data.ts
// (its research subgraph added as a node, or invoked from a node's function) recording into
// the SQLite ledger at argv[2], and stops inside the call argv[4] (`send_email 2`...) until
// the test kills it with SIGKILL. Each email sent and model call paid is reported to the test
// (noteEffect). With argv[5] = "flat", the handler records as the adapter did before subgraphs
// had child runs: it never sees a checkpoint namespace, so every call is in the handler's run.
// Usage: subgraph.test.child.js <sqlite file> <node|function> <crash call> [flat]
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { crashableLedger, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import {
  ASK,
  FlatLedgerHandler,
  RUN,
  SESSION,
  type SubgraphMode,
  supervisorGraph,
  THREAD,
} from "./subgraph.test.data.js";

const [path, mode, crashIn, flat] = process.argv.slice(2);
if (path === undefined || (mode !== "node" && mode !== "function") || crashIn === undefined)
  throw new Error(
    "usage: subgraph.test.child.js <sqlite file> <node|function> <crash call> [flat]",
  );

const watchdog = setTimeout(() => {
  process.stderr.write(`the supervisor did not reach ${crashIn}\n`);
  process.exit(70);
}, 30_000);
const sqlite = new SqliteEventStore({ path });
await sqlite.init();
const store = crashableLedger(sqlite);
const Handler = flat === "flat" ? FlatLedgerHandler : LedgerCallbackHandler;
const handler = new Handler({ store, sessionId: SESSION, runId: RUN });
const graph = supervisorGraph({
  mode: mode as SubgraphMode,
  checkpointer: new LedgerCheckpointSaver({ store }),
  effect: noteEffect,
  crashIn,
});
try {
  await graph.invoke(ASK, threadConfig(handler, THREAD));
} finally {
  clearTimeout(watchdog);
}
await sqlite.close();
