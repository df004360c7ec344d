// A child process for mcp-tools.test.ts: runs the MCP shop (testing/mcp-agents.ts) on the SQLite
// ledger at argv[2], its server logging to argv[3], and dies right after the MCP server made the
// charge, before the call's outcome is recorded: it prints DIED there and waits to be SIGKILLed
// by the test. Ending any other way is a failure.
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { setTracingDisabled } from "@openai/agents";
import { runWithLedger } from "../run-with-ledger.js";
import { CrashingChild } from "./crashing-child.js";
import { mcpShop } from "./mcp-agents.js";
import { runOptions } from "./recorded-run.js";

setTracingDisabled(true);
const [path, log] = process.argv.slice(2);
if (!path || !log) throw new Error("usage: mcp-crash.test.child.js <sqlite file> <log file>");
const store = new SqliteEventStore({ path });
await store.init();
const child = new CrashingChild(store);
const first = mcpShop(log);
first.server.afterCall = async (name) => {
  if (name === "charge") await child.dieHere();
};
await first.server.connect();
await runWithLedger(first.agent, "sell a book", runOptions(child.store, first.model));
process.stderr.write("the MCP shop ended without reaching its crash point\n");
process.exit(1);
