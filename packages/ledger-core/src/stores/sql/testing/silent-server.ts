import { expect } from "vitest";
import { LedgerError } from "../../../events/errors.js";
import { uuidv7 } from "../../../events/ids.js";
import { SessionRecorder } from "../../../recorder/session-recorder.js";
import type { AppendRequest, AppendResult, EventStore } from "../../../store/event-store.js";
import { readWholeRun } from "../../../store/read-all.js";
import type { BlackHoleProxy } from "./black-hole-proxy.js";

/** Slack for the event loop and the server on a small machine, on top of a bound. */
const SLACK_MS = 1_500;

async function failure(run: Promise<unknown>): Promise<{ error: unknown; elapsedMs: number }> {
  const started = Date.now();
  const error = await run.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, elapsedMs: Date.now() - started };
}

/**
 * A store behind `proxy` whose server goes silent (`mode`) during an append: the append fails
 * with `store-unavailable` once the store's bound (`timeoutMs`) has passed, not later, with the
 * driver error as `cause`. Then the server answers again: the same batch sent again is in the
 * run exactly once (written now, or recognised as written), and the store goes on at once
 * (no connection that timed out was kept: the next calls would wait on it).
 */
export async function expectBoundedAppend(options: {
  store: EventStore;
  proxy: BlackHoleProxy;
  timeoutMs: number;
  mode: "silent" | "replies-lost";
}): Promise<{ error: LedgerError; retried: AppendResult }> {
  const { store, proxy, timeoutMs } = options;
  const sessionId = `silent-${uuidv7()}`;
  const address = { sessionId, runId: "r" };
  await store.append({ ...address, expectedSeq: 0, events: [{ type: "run.started" }] });
  const batch: AppendRequest = {
    ...address,
    expectedSeq: 1,
    events: [
      { eventId: `${sessionId}-1`, type: "model.requested", payload: { n: 1 } },
      { eventId: `${sessionId}-2`, type: "model.completed", payload: { n: 2 } },
    ],
  };
  proxy.setMode(options.mode);
  const { error, elapsedMs } = await failure(store.append(batch));
  proxy.setMode("open");
  expect(LedgerError.isInstance(error, "store-unavailable"), String(error)).toBe(true);
  expect((error as LedgerError).cause).toBeInstanceOf(Error);
  expect(elapsedMs).toBeGreaterThanOrEqual(timeoutMs - 50);
  expect(elapsedMs).toBeLessThan(timeoutMs + SLACK_MS);

  const retried = await store.append(batch);
  const events = await readWholeRun(store, address);
  expect(events.map((event) => event.eventId)).toEqual([
    events[0]?.eventId,
    `${sessionId}-1`,
    `${sessionId}-2`,
  ]);
  for (let index = 0; index < 6; index++) {
    const started = Date.now();
    await store.append({
      ...address,
      expectedSeq: 3 + index,
      events: [{ type: "x.after", payload: index }],
    });
    await store.runHead(address);
    expect(Date.now() - started).toBeLessThan(timeoutMs);
  }
  return { error: error as LedgerError, retried };
}

/**
 * A recorder's call while the server is silent, which answers again after `openAfterMs`: the
 * recorder's retries of the same batch (each bounded by the store) get it committed once, and
 * the call resolves.
 */
export async function expectRecorderRidesOut(options: {
  store: EventStore;
  proxy: BlackHoleProxy;
  openAfterMs: number;
}): Promise<void> {
  const { store, proxy } = options;
  const sessionId = `silent-recorder-${uuidv7()}`;
  const recorder = new SessionRecorder({
    store,
    sessionId,
    runId: "r",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  proxy.setMode("silent");
  const opened = setTimeout(() => proxy.setMode("open"), options.openAfterMs);
  try {
    const call = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    await recorder.modelCompleted(call, "hello");
  } finally {
    clearTimeout(opened);
    proxy.setMode("open");
  }
  const events = await readWholeRun(store, { sessionId, runId: "r" });
  expect(events.map((event) => event.type)).toEqual([
    "run.started",
    "model.requested",
    "model.completed",
  ]);
}
