// The child process of the SIGKILL tests: runs the crash scenario named by argv[2], recording
// into the SQLite ledger at argv[3]. The scenario stops at its crash point (it prints the
// marker `crashInChild` waits for) and the test kills it there; ending any other way fails
// the test.
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { crashableLedger } from "./crash-in-child.test.data.js";
import { crashScenarios, isCrashScenarioName } from "./crash-scenarios.test.data.js";

const [scenario, path] = process.argv.slice(2);
if (!isCrashScenarioName(scenario) || !path)
  throw new Error(
    `usage: crash-scenario.test.child.js <${Object.keys(crashScenarios).join(" | ")}> <sqlite file>`,
  );
const store = new SqliteEventStore({ path });
await store.init();
await crashScenarios[scenario](crashableLedger(store));
