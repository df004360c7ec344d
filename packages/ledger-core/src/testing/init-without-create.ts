import assert from "node:assert/strict";
import { LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";

/**
 * `init({ create: false })`, the way reading tools open a store (a misspelt or non-boolean
 * option refused with `invalid-argument` before anything is made): on a location that holds no
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
    // A misspelt option, or "false" from an environment variable, read as the default would
    // make the ledger the caller asked not to make.
    for (const [given, path] of [
      [{ creat: false }, "$.creat"],
      [{ create: "false" }, "$.create"],
      [{ create: false, upgrade: 0 }, "$.upgrade"],
      ["no", "$"],
    ] as const) {
      const refused = await reader.init(given as never).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(
        LedgerError.isInstance(refused, "invalid-argument"),
        `init(${JSON.stringify(given)}): invalid-argument, got ${String(refused)}`,
      );
      assert.equal((refused as LedgerError).path, path);
    }
    assert.equal(await options.leftovers(), 0, "a refused init made something");
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
