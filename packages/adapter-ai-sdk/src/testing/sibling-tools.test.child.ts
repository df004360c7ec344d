// The child process of the sibling-outcome tests: runs the agent (argv[2]: generate | stream,
// argv[3]: lookup | research | charge beside send_email), recording into the SQLite ledger at argv[4],
// until it dies inside send_email with both tool calls in flight (the test SIGKILLs it there).
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { crashWithBothInFlight } from "./sibling-tools.test.data.js";

const [mode, sibling, path] = process.argv.slice(2);
if (
  (mode !== "generate" && mode !== "stream") ||
  (sibling !== "lookup" && sibling !== "research" && sibling !== "charge") ||
  !path
)
  throw new Error(
    "usage: sibling-tools.test.child.js <generate | stream> <lookup | research | charge> <sqlite file>",
  );
const store = new SqliteEventStore({ path });
await store.init();
await crashWithBothInFlight(store, mode, sibling);
