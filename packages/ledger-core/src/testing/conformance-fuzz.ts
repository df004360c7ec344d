import assert from "node:assert/strict";
import { LedgerError } from "../events/errors.js";
import {
  assertUnchanged,
  type CaseFactory,
  freshAddress,
  snapshot,
  started,
  withStore,
} from "./conformance-helpers.js";
import { type Rng, rng } from "./conformance-random.js";

/** Codes a malformed call may be refused with. */
const REFUSALS = new Set([
  "invalid-event",
  "non-serializable",
  "invalid-argument",
  "conflict",
  "duplicate-event",
  "run-closed",
  "not-found",
]);

/** Odd values of every kind a caller can pass: wrong types, exotic objects, traps. */
function oddValue(r: Rng): unknown {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const values: unknown[] = [
    undefined,
    null,
    undefined,
    null,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    -0,
    2 ** 60,
    -1,
    1.5,
    "",
    "\u0000",
    "\ud800",
    "x".repeat(300),
    true,
    [],
    sparse,
    Symbol("s"),
    10n,
    () => 1,
    new Date(0),
    new Map(),
    Object.create(null),
    { toJSON: () => "j" },
    new Uint8Array(2),
    cycle,
    {
      get trap(): never {
        throw new Error("getter");
      },
    },
    new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("proxy");
        },
      },
    ),
    { nested: [{ deep: Number.NaN }] },
  ];
  return r.pick(values);
}

function oddEvent(r: Rng): unknown {
  if (r.chance(0.05)) return oddValue(r);
  const event: Record<string, unknown> = {
    type: r.pick(["x.note", "run.started", "model.requested", "bad", "x.", 5]),
    payload: r.chance(0.5) ? oddValue(r) : { value: oddValue(r), list: [oddValue(r)] },
  };
  for (const field of ["eventId", "actor", "metadata", "evidenceRefs", "stepId", "seq", "hash"])
    if (r.chance(0.15)) event[field] = oddValue(r);
  return event;
}

/**
 * Seeded malformed calls (append, reads, fork, blobs, deleteSession) with values of every odd
 * kind: each is a rejected promise with a `LedgerError` of a known code, never a synchronous
 * throw or the caller's own error, and the store shows exactly what it showed before.
 */
export const fuzzCases: CaseFactory = (makeStore) => [
  {
    group: "bad input",
    name: "seeded malformed calls of every kind are refused with a code and change nothing",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const r = rng(2026);
      const address = freshAddress();
      await store.append({ ...address, expectedSeq: 0, events: [started()] });
      const before = await snapshot(store, address);
      const loose = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const odd = () => oddValue(r);
      const maybe = <T>(good: T) => (r.chance(0.7) ? good : odd());
      const calls: Array<[string, () => unknown]> = [
        [
          "append",
          () =>
            store.append(
              (r.chance(0.1)
                ? odd()
                : {
                    sessionId: maybe(address.sessionId),
                    runId: maybe(address.runId),
                    expectedSeq: maybe(1),
                    events: r.chance(0.9)
                      ? Array.from({ length: r.int(1, 3) }, () => oddEvent(r))
                      : odd(),
                  }) as never,
            ),
        ],
        ["readRun", () => loose.readRun!(r.chance(0.3) ? odd() : { ...address, fromSeq: odd() })],
        [
          "readSession",
          () => loose.readSession!(r.chance(0.3) ? odd() : { ...address, after: odd() }),
        ],
        ["runHead", () => loose.runHead!(r.chance(0.5) ? odd() : { ...address, runId: odd() })],
        ["listRuns", () => loose.listRuns!(odd())],
        ["listSessions", () => loose.listSessions!(r.chance(0.5) ? odd() : { limit: odd() })],
        [
          "fork",
          () => loose.fork!(r.chance(0.3) ? odd() : { ...address, newRunId: odd(), uptoSeq: 1 }),
        ],
        ["putBlob", () => loose.putBlob!(odd())],
        ["getBlob", () => loose.getBlob!(odd())],
        ["deleteSession", () => loose.deleteSession!(odd())],
      ];
      for (let step = 0; step < 600; step++) {
        const [name, call] = r.pick(calls);
        const label = `step ${step} (${name})`;
        let promise: unknown;
        try {
          promise = call();
        } catch (error) {
          assert.fail(`${label}: threw synchronously (${String(error)}); it must reject`);
        }
        try {
          await promise;
        } catch (error) {
          assert.ok(LedgerError.isInstance(error), `${label}: not a LedgerError: ${String(error)}`);
          assert.ok(REFUSALS.has(error.code), `${label}: unexpected code ${error.code}`);
        }
      }
      await assertUnchanged("malformed calls", store, address, before);
    }),
  },
];
