import assert from "node:assert/strict";
import { setImmediate as nextTurn } from "node:timers/promises";
import { sha256Hex } from "../events/canonical.js";
import { LedgerError, type LedgerErrorCode } from "../events/errors.js";
import { computeEventHash } from "../events/hash-chain.js";
import { uuidv7 } from "../events/ids.js";
import type { JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { EventPage, EventStore, RunSummary, SessionSummary } from "../store/event-store.js";

/** Makes a fresh, empty store for one case (it may or may not have run `init()` yet). */
export type MakeStore = () => EventStore | Promise<EventStore>;

/** One conformance case, runnable by any test runner. */
export interface ConformanceCase {
  /** Topic, e.g. `append`, `concurrency`, `bad input`. */
  group: string;
  /** Unique across the suite; what `options.skip` matches. */
  name: string;
  /** Suggested timeout in milliseconds. */
  timeoutMs: number;
  run(): Promise<void>;
}

/** Builds the cases of one topic. */
export type CaseFactory = (makeStore: MakeStore) => ConformanceCase[];

/**
 * Wraps a case body: make the store, `init()` it (init must be idempotent, so a factory that
 * already ran it is fine), run the body, always close. A close failure never hides the body's.
 */
export function withStore(
  makeStore: MakeStore,
  body: (store: EventStore) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const store = await makeStore();
    let outcome: { ok: true } | { ok: false; error: unknown } = { ok: true };
    try {
      await store.init();
      await body(store);
    } catch (error) {
      outcome = { ok: false, error };
    }
    let closeError: { error: unknown } | undefined;
    try {
      await store.close();
    } catch (error) {
      closeError = { error };
    }
    if (!outcome.ok) throw outcome.error;
    if (closeError) throw closeError.error;
  };
}

/** A unique id for this case (UUIDv7 based, so cases never collide on a shared store). */
export function freshId(label: string): string {
  return `${label}-${uuidv7()}`;
}

/** A session and run address nobody else uses. */
export function freshAddress(): { sessionId: string; runId: string } {
  return { sessionId: freshId("session"), runId: freshId("run") };
}

export const agent = { type: "agent", id: "conformance-agent" } as const;

/** A small custom event with a distinct payload. */
export function note(value: JsonValue = null, extra: Partial<NewEvent> = {}): NewEvent {
  return { eventId: uuidv7(), type: "x.note", payload: { value }, ...extra };
}

export function started(extra: Partial<NewEvent> = {}): NewEvent {
  return { eventId: uuidv7(), type: "run.started", actor: { ...agent }, payload: {}, ...extra };
}

/** A `sha256:<hex>` reference (format only; the blob need not exist). */
export function someRef(text: string): string {
  return `sha256:${sha256Hex(text)}`;
}

export function yieldTurn(): Promise<void> {
  return nextTurn().then(() => undefined);
}

function shown(value: unknown): string {
  if (LedgerError.isInstance(value))
    return `LedgerError(${value.code}, path ${value.path}): ${value.message}`;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    return JSON.stringify(value)?.slice(0, 300) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Runs `action` and asserts it rejects with a `LedgerError` of `code` (and `path` when given).
 * A synchronous throw is a failure too: every store method returns a promise and rejects it.
 */
export async function expectLedgerError(
  label: string,
  action: () => Promise<unknown>,
  expected: { code: LedgerErrorCode; path?: string },
): Promise<LedgerError> {
  let promise: Promise<unknown>;
  try {
    promise = action();
  } catch (error) {
    assert.fail(`${label}: the call threw synchronously (${shown(error)}); it must reject`);
  }
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await promise };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) assert.fail(`${label}: expected ${expected.code}, got ${shown(outcome.value)}`);
  const error = outcome.error;
  if (!LedgerError.isInstance(error))
    assert.fail(`${label}: expected a LedgerError ${expected.code}, got ${shown(error)}`);
  assert.equal(error.code, expected.code, `${label}: wrong code (${shown(error)})`);
  if (expected.path !== undefined)
    assert.equal(error.path, expected.path, `${label}: wrong path (${shown(error)})`);
  return error;
}

/** Every page of `listSessions`, with a bound so a broken cursor cannot loop forever. */
export async function allSessions(store: EventStore, limit = 100): Promise<SessionSummary[]> {
  const out: SessionSummary[] = [];
  let after: string | undefined;
  for (let page = 0; page < 10_000; page++) {
    const result = await store.listSessions(after === undefined ? { limit } : { after, limit });
    out.push(...result.sessions);
    if (result.nextCursor === undefined) return out;
    assert.notEqual(result.nextCursor, after, "listSessions: nextCursor did not move");
    after = result.nextCursor;
  }
  assert.fail("listSessions: more than 10,000 pages");
}

/** Everything observable about one session, to compare before and after a rejected call. */
export interface StoreSnapshot {
  sessions: SessionSummary[];
  session: EventPage;
  runs: RunSummary[];
  head: unknown;
}

export async function snapshot(
  store: EventStore,
  address: { sessionId: string; runId: string },
): Promise<StoreSnapshot> {
  const runs = await store.listRuns(address.sessionId);
  return {
    sessions: await allSessions(store),
    session: await store.readSession({ sessionId: address.sessionId }),
    runs: [...runs].sort(byRunId),
    head: await store.runHead(address),
  };
}

/** Asserts the store shows exactly what it showed in `before`. */
export async function assertUnchanged(
  label: string,
  store: EventStore,
  address: { sessionId: string; runId: string },
  before: StoreSnapshot,
): Promise<void> {
  assert.deepStrictEqual(
    await snapshot(store, address),
    before,
    `${label}: the store changed after a rejected call`,
  );
}

/** Asserts `events` is a whole run: seq 0..n-1, prevHash links, every hash recomputes. */
export function assertChain(label: string, events: LedgerEvent[]): void {
  events.forEach((event, index) => {
    assert.equal(event.seq, index, `${label}: seq of event ${index}`);
    const previous = index === 0 ? null : (events[index - 1]?.hash ?? "missing");
    assert.equal(event.prevHash, previous, `${label}: prevHash of seq ${index}`);
    assert.equal(computeEventHash(event), event.hash, `${label}: hash of seq ${index}`);
  });
}

/** Asserts commit cursors are exactly `first, first + 1, ...`. */
export function assertCursors(label: string, events: LedgerEvent[], first = 1): void {
  assert.deepStrictEqual(
    events.map((event) => event.commitCursor),
    events.map((_, index) => first + index),
    `${label}: commit cursors must be gap-free from ${first}`,
  );
}

/** The whole run, read in one call. */
export async function readAll(
  store: EventStore,
  address: { sessionId: string; runId: string },
): Promise<LedgerEvent[]> {
  return (await store.readRun(address)).events;
}

/** The whole session in commit order, read in one call. */
export async function readSessionAll(store: EventStore, sessionId: string): Promise<LedgerEvent[]> {
  return (await store.readSession({ sessionId })).events;
}

/** Appends, retrying on `conflict` from the reported `actualSeq`, until the batch is in. */
export async function appendWithRetry(
  store: EventStore,
  address: { sessionId: string; runId: string },
  events: NewEvent[],
  state: { expectedSeq: number; conflicts: number },
): Promise<LedgerEvent[]> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    try {
      const result = await store.append({ ...address, expectedSeq: state.expectedSeq, events });
      state.expectedSeq = (result.events[result.events.length - 1]?.seq ?? -1) + 1;
      return result.events;
    } catch (error) {
      if (!LedgerError.isInstance(error, "conflict")) throw error;
      state.conflicts++;
      const actual = (error as LedgerError & { actualSeq?: unknown }).actualSeq;
      assert.equal(typeof actual, "number", "a conflict must carry actualSeq");
      assert.ok(
        (actual as number) > state.expectedSeq,
        `conflict actualSeq ${actual} must be past ${state.expectedSeq}`,
      );
      state.expectedSeq = actual as number;
      await yieldTurn();
    }
  }
  assert.fail("appendWithRetry: 1000 conflicts in a row");
}

const isoTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

export function assertIsoTime(label: string, value: unknown): void {
  assert.equal(typeof value, "string", `${label} must be a string`);
  assert.match(value as string, isoTime, `${label} must be an ISO time in UTC`);
  assert.ok(Number.isFinite(Date.parse(value as string)), `${label} must parse`);
}

export const uuidv7Format = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Orders run summaries by runId, to compare `listRuns` answers whatever order a store gives. */
export function byRunId(a: RunSummary, b: RunSummary): number {
  return a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}
