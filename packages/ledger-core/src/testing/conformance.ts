import { InvalidArgumentError } from "../events/errors.js";
import { appendCases } from "./conformance-append.js";
import { appendBlobCases } from "./conformance-append-blobs.js";
import { badInputCases } from "./conformance-bad-input.js";
import { blobCases } from "./conformance-blobs.js";
import { closeCases } from "./conformance-close.js";
import { closedRunCases } from "./conformance-closed.js";
import { collectBlobCases } from "./conformance-collect-blobs.js";
import { concurrencyCases } from "./conformance-concurrency.js";
import { forkCases } from "./conformance-fork.js";
import { fuzzCases } from "./conformance-fuzz.js";
import type { ConformanceCase, MakeStore } from "./conformance-helpers.js";
import { mixedCases } from "./conformance-mixed.js";
import { modelCases } from "./conformance-model.js";
import { readCases } from "./conformance-read.js";
import { readRoundTripCases } from "./conformance-read-round-trip.js";
import { retentionCases } from "./conformance-retention.js";
import { retentionRaceCases } from "./conformance-retention-races.js";
import { retryCases } from "./conformance-retry.js";

export type { ConformanceCase, MakeStore } from "./conformance-helpers.js";

/** The two functions of a test runner the suite needs (vitest, jest and mocha fit as they are). */
export interface ConformanceRunner {
  describe(name: string, body: () => void): void;
  it(name: string, body: () => Promise<void>, timeoutMs?: number): void;
}

export interface ConformanceOptions {
  /**
   * Names of cases not to run (as `eventStoreConformanceCases` names them). A store that skips
   * a case must say why in a comment next to the list. An unknown name throws, so a renamed
   * case is never skipped silently. Skipped cases are registered with `runner.it.skip` when
   * the runner has it, so they show up as skipped.
   */
  skip?: string[];
}

/**
 * Every case of the store contract (§4, §6), as `{ group, name, timeoutMs, run }`, for runners
 * that are not describe/it shaped (e.g. `node:test`: `for (const c of cases) test(c.name, c.run)`).
 * Each `run` makes its own store with `makeStore`, calls `init()` and always `close()`s it.
 */
export function eventStoreConformanceCases(makeStore: MakeStore): ConformanceCase[] {
  const cases = [
    ...appendCases(makeStore),
    ...retryCases(makeStore),
    ...closedRunCases(makeStore),
    ...concurrencyCases(makeStore),
    ...mixedCases(makeStore),
    ...readCases(makeStore),
    ...readRoundTripCases(makeStore),
    ...forkCases(makeStore),
    ...badInputCases(makeStore),
    ...fuzzCases(makeStore),
    ...blobCases(makeStore),
    ...appendBlobCases(makeStore),
    ...retentionCases(makeStore),
    ...retentionRaceCases(makeStore),
    ...collectBlobCases(makeStore),
    ...modelCases(makeStore),
    ...closeCases(makeStore),
  ];
  const names = new Set<string>();
  for (const item of cases) {
    if (names.has(item.name)) throw new Error(`duplicate conformance case name: ${item.name}`);
    names.add(item.name);
  }
  return cases;
}

/**
 * Registers the event-store conformance suite, the executable definition of `EventStore`
 * (DESIGN §4 and §6), with any describe/it test runner. Every store passes it unchanged.
 *
 * ```ts
 * import { describe, it } from "vitest";
 * import { runEventStoreConformance } from "@agent-ledger/core/testing";
 * import { MyEventStore } from "./my-store.js";
 *
 * runEventStoreConformance(() => new MyEventStore({ url: freshDatabaseUrl() }), { describe, it });
 * ```
 *
 * Without a runner (`runEventStoreConformance(makeStore)`, as DESIGN §4 writes it) the suite
 * registers with the runner's global `describe` and `it` (jest, mocha, vitest with
 * `globals: true`); where there are none it throws `invalid-argument` at `$.runner`.
 *
 * What the suite expects of `makeStore`:
 * - Every call returns a store that is **empty** (a new file, schema, database or key
 *   prefix, or truncated tables): the empty-store and listSessions cases depend on it. The
 *   other cases use UUIDv7-based ids and never collide with data left by earlier cases.
 * - The store may come initialised or not: each case calls `await store.init()` itself (init
 *   must be idempotent) and always `await store.close()` at the end. Cases run one by one.
 *
 * What it checks, per group: `append` (envelope verbatim, seq and hash chain, conflict with
 * actualSeq, isolation, defensive copies: `append` copies its input before it returns the
 * promise), `retry` (idempotent retries, duplicate-event), `closed run` (run-closed),
 * `concurrency` (one winner at a position, retrying writers, a reader tailing `readSession`
 * while writers commit, forks and first appends racing to make one run, eight writers mixing
 * every kind of write at once), `read` (commit order and paging, listRuns, listSessions paged in
 * code-unit id order, unicode and a 1 MiB payload), `fork`, `bad input` (every §6 class with
 * code, path and the store unchanged, and 600 seeded malformed calls of every method),
 * `blobs` and `retention` (deleteSession: events, runs and
 * unshared blobs gone, shared blobs kept, open runs refused, the grace period that protects a
 * blob another writer is about to reference, concurrent writers), and `against the reference`
 * (seeded random sequences of appends, retries, forks, deletions and reads answered exactly as
 * `MemoryEventStore` answers them). Every failure is a rejected promise with a
 * `LedgerError` code, never a synchronous throw.
 * Assertions use `node:assert/strict`; the suite imports no test runner.
 */
export function runEventStoreConformance(
  makeStore: MakeStore,
  given?: ConformanceRunner,
  options: ConformanceOptions = {},
): void {
  if (typeof makeStore !== "function")
    throw new InvalidArgumentError("$.makeStore", "makeStore must be a function returning a store");
  const runner = given ?? globalRunner();
  if (typeof runner?.describe !== "function" || typeof runner.it !== "function")
    throw new InvalidArgumentError("$.runner", "the runner must have describe and it functions");
  const cases = eventStoreConformanceCases(makeStore);
  const skip = options.skip ?? [];
  skip.forEach((name, index) => {
    if (!cases.some((item) => item.name === name))
      throw new InvalidArgumentError(
        `$.options.skip[${index}]`,
        `no conformance case is named ${JSON.stringify(name)}`,
      );
  });
  const groups = [...new Set(cases.map((item) => item.group))];
  const skipIt = (runner.it as { skip?: ConformanceRunner["it"] }).skip;
  runner.describe("EventStore conformance", () => {
    for (const group of groups) {
      runner.describe(group, () => {
        for (const item of cases.filter((candidate) => candidate.group === group)) {
          if (!skip.includes(item.name)) runner.it(item.name, item.run, item.timeoutMs);
          else if (typeof skipIt === "function") skipIt.call(runner.it, item.name, item.run);
        }
      });
    }
  });
}

/** The test runner's global `describe` and `it` (jest, mocha, vitest with `globals: true`). */
function globalRunner(): ConformanceRunner {
  const scope = globalThis as { describe?: unknown; it?: unknown };
  if (typeof scope.describe !== "function" || typeof scope.it !== "function")
    throw new InvalidArgumentError(
      "$.runner",
      "no global describe/it here: pass the runner's, e.g. runEventStoreConformance(makeStore, { describe, it }) with both imported from vitest",
    );
  return { describe: scope.describe, it: scope.it } as ConformanceRunner;
}
