// A crash child for send-fanout-resume.test.ts: runs the fan-out graph of send-fanout.test.data.ts
// recording into the SQLite ledger at argv[2], and stops inside `charge 2` (with `summarize 2`
// in flight too) until the test kills it with SIGKILL. Each charge made and model call paid is
// reported to the test (noteEffect) before anything else can happen.
// Usage: send-fanout.test.child.js <sqlite file>
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { HumanMessage } from "@langchain/core/messages";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { crashableLedger, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { fanoutGraph, RUN, SESSION, THREAD } from "./send-fanout.test.data.js";

const [path] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: send-fanout.test.child.js <sqlite file>");

// A child that never gets to its crash point ends here with a message, instead of leaving its
// test to time out. (At the crash point, haltHere keeps the child alive until the kill.)
const watchdog = setTimeout(() => {
  process.stderr.write("the fan-out did not reach its crash point\n");
  process.exit(70);
}, 30_000);
const sqlite = new SqliteEventStore({ path });
await sqlite.init();
const store = crashableLedger(sqlite);
const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
const graph = fanoutGraph(store, { effect: noteEffect, crash: true });
try {
  await graph.invoke({ messages: [new HumanMessage("pay")] }, threadConfig(handler, THREAD));
} finally {
  clearTimeout(watchdog);
}
await sqlite.close();
