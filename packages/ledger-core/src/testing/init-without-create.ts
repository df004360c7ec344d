import assert from "node:assert/strict";
import { LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";

/**
 * `init({ create: false })`, the way reading tools open a store: on a location that holds no
 * ledger it fails with `not-found` and makes nothing there (`leftovers` counts what the
 * location holds: tables, keys); once a plain `init()` made the ledger, the same call opens
 * it and the store reads and writes. `open` makes a new store on the location each time.
 */
export async function checkInitWithoutCreate(options: {
  open: () => EventStore;
  leftovers: () => Promise<number>;
}): Promise<void> {
  const reader = options.open();
  try {
    const failure = await reader.init({ create: false }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(LedgerError.isInstance(failure, "not-found"), `not-found, got ${String(failure)}`);
    assert.match((failure as Error).message, /^no ledger at /);
  } finally {
    await reader.close();
  }
  assert.equal(await options.leftovers(), 0, "init({ create: false }) made something");

  const creator = options.open();
  await creator.init();
  await creator.close();
  const store = options.open();
  try {
    await store.init({ create: false });
    const written = await store.append({
      sessionId: "opened",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", payload: {} }],
    });
    assert.equal(written.events.length, 1);
    assert.equal((await store.readSession({ sessionId: "opened" })).events.length, 1);
  } finally {
    await store.close();
  }
}
