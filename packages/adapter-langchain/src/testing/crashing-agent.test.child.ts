// A crash child: runs one scenario of crash-scenarios.test.data.ts, recording into the SQLite
// ledger at argv[3]. The scenario stops at its crash point (it prints CRASH_POINT) and the test
// kills it there with SIGKILL; a reference scenario runs to its end and the child exits.
// Usage: crashing-agent.test.child.js <scenario> <sqlite file> [scenario arguments...]
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { type CrashScenario, crashableLedger } from "./crash-point.js";
import { crashScenarios, isCrashScenario } from "./crash-scenarios.test.data.js";

const [name, path, ...args] = process.argv.slice(2);
if (name === undefined || path === undefined || !isCrashScenario(name))
  throw new Error(`usage: crashing-agent.test.child.js <scenario> <sqlite file> [args...]`);

// A child that never gets to its crash point (a scenario that hangs elsewhere) ends here with a
// message, instead of leaving its test to time out. (At the crash point, haltHere keeps the
// child alive until the kill.)
const watchdog = setTimeout(() => {
  process.stderr.write(`${name} did not reach its crash point\n`);
  process.exit(70);
}, 30_000);
const scenario: CrashScenario = crashScenarios[name];
const store = new SqliteEventStore({ path });
await store.init();
try {
  await scenario(crashableLedger(store), args);
} finally {
  clearTimeout(watchdog);
}
await store.close();
