// A child process for handoff-callback.test.ts: runs the scenario argv[2] of HANDOFF_CRASHES on
// the SQLite ledger at argv[3] until it dies at its crash point: it prints DIED there and waits
// to be SIGKILLed by the test. Ending any other way is a failure.
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { setTracingDisabled } from "@openai/agents";
import { runWithLedger } from "../run-with-ledger.js";
import { CrashingChild } from "./crashing-child.js";
import { handoffFixture } from "./handoff-agents.js";
import { HANDOFF_CRASHES, isHandoffCrash } from "./handoff-crashes.js";
import { runOptions } from "./recorded-run.js";

setTracingDisabled(true);
const [name, path] = process.argv.slice(2);
if (!name || !path || !isHandoffCrash(name))
  throw new Error(`usage: handoff-crash.test.child.js <scenario> <sqlite file>; got "${name}"`);
const store = new SqliteEventStore({ path });
await store.init();
const child = new CrashingChild(store);
const { kind, asTool, diesAfter } = HANDOFF_CRASHES[name];
const first = handoffFixture({ kind, asTool, afterEffect: child.afterEffect(diesAfter) });
await runWithLedger(first.main, "pay", runOptions(child.store, first.model));
process.stderr.write(`scenario "${name}" ended without reaching its crash point\n`);
process.exit(1);
