import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SqliteEventStore } from "./sqlite-store.js";

const folder = mkdtempSync(join(tmpdir(), "ledger-sqlite-conformance-"));
let count = 0;
afterAll(() => rmSync(folder, { recursive: true, force: true }));

// Each case gets a new database file; nothing is skipped.
runEventStoreConformance(
  () => new SqliteEventStore({ path: join(folder, `store-${++count}.db`) }),
  { describe, it },
);
