// The child process of the restoreConversation SIGKILL tests: runs the shop chat scenario named
// by argv[2], recording into the SQLite ledger at argv[3], until the test kills it at its crash
// point. Ending any other way fails the test.
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { crashAfterEmbedding, crashBeforeResultsAreSeen } from "./shop-chat.test.data.js";

const scenarios = {
  "before results are seen": crashBeforeResultsAreSeen,
  "after an embedding": crashAfterEmbedding,
};
const [scenario, path] = process.argv.slice(2);
if (scenario === undefined || !Object.hasOwn(scenarios, scenario) || !path)
  throw new Error(
    `usage: shop-chat.test.child.js <${Object.keys(scenarios).join(" | ")}> <sqlite file>`,
  );
const store = new SqliteEventStore({ path });
await store.init();
await scenarios[scenario as keyof typeof scenarios](store);
