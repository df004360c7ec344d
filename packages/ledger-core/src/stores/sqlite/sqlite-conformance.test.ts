import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { SqliteEventStore } from "./sqlite-store.js";

const folder = scratchDirectory("ledger-sqlite-conformance-", { beforeAll, afterAll });
let count = 0;

// Each case gets a new database file; nothing is skipped.
runEventStoreConformance(
  () => new SqliteEventStore({ path: join(folder, `store-${++count}.db`) }),
  { describe, it },
);
