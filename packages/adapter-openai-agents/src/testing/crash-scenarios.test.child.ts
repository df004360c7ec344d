// A child process for the crash tests: runs the scenario argv[2] of CRASH_SCENARIOS on the
// SQLite ledger at argv[3] until it reaches its crash point, prints DIED there and waits to be
// SIGKILLed by the test (killAtMarker). Ending any other way is a failure.
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { setTracingDisabled } from "@openai/agents";
import { CRASH_SCENARIOS, isCrashScenario } from "./crash-scenarios.test.data.js";
import { CrashingChild } from "./crashing-child.js";

setTracingDisabled(true);
const [name, path] = process.argv.slice(2);
if (!name || !path || !isCrashScenario(name))
  throw new Error(`usage: crash-scenarios.test.child.js <scenario> <sqlite file>; got "${name}"`);
const store = new SqliteEventStore({ path });
await store.init();
await CRASH_SCENARIOS[name](new CrashingChild(store));
process.stderr.write(`scenario "${name}" ended without reaching its crash point\n`);
process.exit(1);
