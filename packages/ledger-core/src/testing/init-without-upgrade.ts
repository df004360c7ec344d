import assert from "node:assert/strict";
import { LedgerError } from "../events/errors.js";
import type { EventStore, InitOptions } from "../store/event-store.js";

/**
 * `init({ upgrade: false })`, the way `agent-ledger`'s commands open a store, on a ledger an
 * older release left (`found` its version, `reads` the one this release reads): refused with
 * `invalid-argument` at `$.upgrade`, with and without `create: false`, and the ledger left
 * exactly as it was (`snapshot`: its version and tables or keys, taken before and after). Once
 * a plain `init()` upgraded it, the same call opens it and the store reads it. `open` makes a
 * new store on the location each time.
 */
export async function checkInitWithoutUpgrade(options: VersionedLedger): Promise<void> {
  await checkRefused(options, [{ upgrade: false }, { create: false, upgrade: false }], {
    path: "$.upgrade",
    says: [`version ${options.found}\\b`, "agent-ledger upgrade"],
  });

  const upgrader = options.open();
  await upgrader.init({ create: false });
  await upgrader.close();
  const store = options.open();
  try {
    await store.init({ create: false, upgrade: false });
    await store.listSessions();
  } finally {
    await store.close();
  }
}

/**
 * Every `init()` (plain, `create: false`, `upgrade: false`, both) on a ledger a newer release
 * upgraded (`found` its version, `reads` the one this release reads): refused with
 * `invalid-argument` at `$` (not `store-unavailable`, which a caller retries for good), naming
 * both versions, and the ledger left exactly as it was (`snapshot`).
 */
export async function checkNewerLedgerRefused(options: VersionedLedger): Promise<void> {
  await checkRefused(
    options,
    [{}, { create: false }, { upgrade: false }, { create: false, upgrade: false }],
    { path: "$", says: [`version ${options.found}, a newer release's`] },
  );
}

/** A ledger left at version `found` by another release; this one `reads` another. */
export interface VersionedLedger {
  /** Makes a new store on the ledger's location. */
  open: () => EventStore;
  /** Its version and tables or keys, to compare before and after. */
  snapshot: () => Promise<unknown>;
  found: number;
  reads: number;
}

/**
 * Each of `inits` refused with `invalid-argument` at `path`, `details: { found, reads }`, a
 * message naming the version this release reads and matching each of `says`, and the ledger
 * left exactly as it was.
 */
async function checkRefused(
  options: VersionedLedger,
  inits: InitOptions[],
  expected: { path: string; says: string[] },
): Promise<void> {
  const before = await options.snapshot();
  for (const init of inits) {
    const store = options.open();
    try {
      const failure = await store.init(init).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(
        LedgerError.isInstance(failure, "invalid-argument"),
        `init(${JSON.stringify(init)}): invalid-argument, got ${String(failure)}`,
      );
      assert.equal(failure.path, expected.path);
      assert.deepEqual(failure.details, { found: options.found, reads: options.reads });
      for (const pattern of expected.says) assert.match(failure.message, new RegExp(pattern));
      assert.match(failure.message, new RegExp(`reads [a-z ]*version ${options.reads}\\b`));
    } finally {
      await store.close();
    }
    assert.deepEqual(await options.snapshot(), before, `init(${JSON.stringify(init)}) changed it`);
  }
}
