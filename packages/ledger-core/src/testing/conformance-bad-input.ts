import type { LedgerErrorCode } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { EventStore } from "../store/event-store.js";
import {
  assertUnchanged,
  type CaseFactory,
  expectLedgerError,
  freshAddress,
  note,
  snapshot,
  someRef,
  started,
  withStore,
} from "./conformance-helpers.js";

type Address = { sessionId: string; runId: string };
// Bad input is, by definition, not what the types allow.
type Loose = Record<string, unknown>;

class Point {
  x = 1;
}

/** Values §6 rejects as `non-serializable`, with the path suffix of the first bad value. */
function nonSerializable(): Array<[string, unknown, string]> {
  const sparse: unknown[] = [1];
  sparse[2] = 3;
  const cycle: Record<string, unknown> = { a: 1 };
  cycle.self = cycle;
  const deepCycle: Record<string, unknown> = { list: [] };
  (deepCycle.list as unknown[]).push({ back: deepCycle });
  return [
    ["undefined", undefined, ""],
    ["undefined in an array", [1, undefined], "[1]"],
    ["a function", () => 1, ""],
    ["a symbol", Symbol("s"), ""],
    ["a bigint", 10n, ""],
    ["NaN", Number.NaN, ""],
    ["Infinity", Number.POSITIVE_INFINITY, ""],
    ["-Infinity", Number.NEGATIVE_INFINITY, ""],
    ["-0", -0, ""],
    ["a sparse array", sparse, "[1]"],
    ["a cycle", cycle, ".self"],
    ["a cycle through an array", deepCycle, ".list[0].back"],
    ["a Date", new Date(0), ""],
    ["a Map", new Map([["a", 1]]), ""],
    ["a Set", new Set([1]), ""],
    ["a class instance", new Point(), ""],
    ["a boxed string", new String("s"), ""],
    ["a Uint8Array", new Uint8Array([1]), ""],
    ["an Error", new Error("boom"), ""],
    ["a symbol-keyed object", { [Symbol("k")]: 1 }, ""],
    ["a lone surrogate", "a\ud800b", ""],
    ["a nested bad value", { ok: [{ fine: true }, { bad: Number.NaN }] }, ".ok[1].bad"],
    [
      "a getter that throws",
      {
        get bad(): never {
          throw new Error("boom");
        },
      },
      ".bad",
    ],
    [
      "a proxy whose keys throw",
      new Proxy(
        {},
        {
          ownKeys() {
            throw new Error("boom");
          },
        },
      ),
      "",
    ],
  ];
}

function messages(content: unknown): Loose {
  return {
    messages: [{ content: "a" }, { content: "b" }, { content: "c" }, { content }],
  };
}

async function expectRejected(
  store: EventStore,
  address: Address,
  label: string,
  request: Loose,
  expected: { code: LedgerErrorCode; path: string },
): Promise<void> {
  const before = await snapshot(store, address);
  await expectLedgerError(label, () => store.append(request as never), expected);
  await assertUnchanged(label, store, address, before);
}

/** A session with one event at seq 0, and a fresh address nobody wrote to. */
async function setup(store: EventStore): Promise<{ existing: Address; fresh: Address }> {
  const existing = freshAddress();
  await store.append({ ...existing, expectedSeq: 0, events: [started()] });
  return { existing, fresh: freshAddress() };
}

const idValues: Array<[string, unknown]> = [
  ["empty", ""],
  ["256 characters", "x".repeat(256)],
  ["a NUL", "a\u0000b"],
  ["a newline", "a\nb"],
  ["DEL", "a\u007fb"],
  ["a C1 control", "a\u0085b"],
  ["a number", 42],
  ["null", null],
  ["an object", { id: "x" }],
];

export const badInputCases: CaseFactory = (makeStore) => [
  {
    group: "bad input",
    name: "non-JSON payload and metadata values are non-serializable with their exact path",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const { existing, fresh } = await setup(store);
      for (const [label, value, suffix] of nonSerializable()) {
        await expectRejected(
          store,
          fresh,
          `payload: ${label}`,
          { ...fresh, expectedSeq: 0, events: [{ ...note(), payload: messages(value) }] },
          { code: "non-serializable", path: `$.events[0].payload.messages[3].content${suffix}` },
        );
        await expectRejected(
          store,
          existing,
          `metadata: ${label}`,
          {
            ...existing,
            expectedSeq: 1,
            events: [note("valid"), { ...note(), metadata: { trace: [{ value }] } }],
          },
          { code: "non-serializable", path: `$.events[1].metadata.trace[0].value${suffix}` },
        );
      }
    }),
  },
  {
    group: "bad input",
    name: "malformed ids are invalid-event with their path",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const { existing, fresh } = await setup(store);
      for (const [label, value] of idValues) {
        for (const field of ["sessionId", "runId"]) {
          const request = { ...fresh, [field]: value, expectedSeq: 0, events: [started()] };
          await expectRejected(store, fresh, `${field} ${label}`, request, {
            code: "invalid-event",
            path: `$.${field}`,
          });
        }
        for (const field of [
          "eventId",
          "stepId",
          "attemptId",
          "retryOf",
          "parentRunId",
          "causedByEventId",
        ]) {
          const request = {
            ...existing,
            expectedSeq: 1,
            events: [note("valid"), { ...note(), [field]: value }],
          };
          await expectRejected(store, existing, `${field} ${label}`, request, {
            code: "invalid-event",
            path: `$.events[1].${field}`,
          });
        }
      }
      const actors: Array<[unknown, string]> = [
        [{ type: "agent", id: "" }, "$.events[0].actor.id"],
        [{ type: "robot", id: "r" }, "$.events[0].actor.type"],
        [{ type: "agent", id: "a", extra: 1 }, "$.events[0].actor.extra"],
        [{ type: "agent", id: "a", framework: "x".repeat(256) }, "$.events[0].actor.framework"],
        ["agent", "$.events[0].actor"],
      ];
      for (const [actor, path] of actors) {
        await expectRejected(
          store,
          existing,
          `actor ${JSON.stringify(actor)}`,
          { ...existing, expectedSeq: 1, events: [{ ...note(), actor }] },
          { code: "invalid-event", path },
        );
      }
    }),
  },
  {
    group: "bad input",
    name: "bad types, positions, batches and writer-assigned fields are invalid-event",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const { existing } = await setup(store);
      const at = (events: unknown, ...seq: unknown[]) => ({
        ...existing,
        expectedSeq: seq.length === 0 ? 1 : seq[0],
        events,
      });
      const cases: Array<[string, Loose, string]> = [];
      for (const type of ["foo", "", "x.", "RUN.STARTED", "run.started ", 42, undefined])
        cases.push([`type ${String(type)}`, at([{ eventId: uuidv7(), type }]), "$.events[0].type"]);
      for (const expectedSeq of [
        -1,
        1.5,
        Number.NaN,
        "1",
        undefined,
        Number.POSITIVE_INFINITY,
        2 ** 53,
      ])
        cases.push([
          `expectedSeq ${String(expectedSeq)}`,
          at([note()], expectedSeq),
          "$.expectedSeq",
        ]);
      for (const events of [[], "events", undefined, { 0: note() }])
        cases.push([`events ${JSON.stringify(events)}`, at(events), "$.events"]);
      for (const event of [null, "event", [note()], 7])
        cases.push([`event ${JSON.stringify(event)}`, at([note(), event]), "$.events[1]"]);
      const assigned = [
        "seq",
        "hash",
        "prevHash",
        "commitCursor",
        "recordedAt",
        "sessionId",
        "runId",
        "schemaVersion",
        "color",
      ];
      for (const field of assigned)
        cases.push([
          `writer-assigned ${field}`,
          at([{ ...note(), [field]: 1 }]),
          `$.events[0].${field}`,
        ]);
      // A key append does not take: `blob` for `blobs` left the events naming content never
      // stored. (One set to undefined, as an optional spread leaves it, is let through.)
      cases.push([
        "a misspelt key of the request",
        { ...at([note()]), blob: [new TextEncoder().encode("kept")] },
        "$.blob",
      ]);
      cases.push(["an unknown key of the request", { ...at([note()]), runID: "r" }, "$.runID"]);
      const holes: unknown[] = [];
      holes[1] = note("after a hole");
      cases.push(["a hole in events", at(holes), "$.events[0]"]);
      const refHoles: unknown[] = [];
      refHoles[1] = someRef("after a hole");
      cases.push([
        "a hole in evidenceRefs",
        at([{ ...note(), evidenceRefs: refHoles }]),
        "$.events[0].evidenceRefs[0]",
      ]);
      const twice = note("twice");
      cases.push([
        "one eventId twice in a batch",
        at([twice, { ...twice }]),
        "$.events[1].eventId",
      ]);
      const tool = (effect: unknown) => [
        { eventId: uuidv7(), type: "tool.requested", payload: { name: "t", args: {}, effect } },
      ];
      cases.push(["effect as a string", at(tool("write")), "$.events[0].payload.effect"]);
      cases.push(["effect null", at(tool(null)), "$.events[0].payload.effect"]);
      cases.push([
        "effect kind",
        at(tool({ kind: "maybe", idempotent: false })),
        "$.events[0].payload.effect.kind",
      ]);
      cases.push([
        "effect without idempotent",
        at(tool({ kind: "write" })),
        "$.events[0].payload.effect.idempotent",
      ]);
      cases.push([
        "effect idempotent string",
        at(tool({ kind: "read", idempotent: "yes" })),
        "$.events[0].payload.effect.idempotent",
      ]);
      cases.push([
        "evidenceRefs not an array",
        at([{ ...note(), evidenceRefs: someRef("a") }]),
        "$.events[0].evidenceRefs",
      ]);
      cases.push([
        "evidenceRef malformed",
        at([{ ...note(), evidenceRefs: [someRef("a"), "sha256:abc"] }]),
        "$.events[0].evidenceRefs[1]",
      ]);
      cases.push([
        "evidenceRef upper case",
        at([{ ...note(), evidenceRefs: [someRef("a").toUpperCase()] }]),
        "$.events[0].evidenceRefs[0]",
      ]);
      cases.push(["metadata array", at([{ ...note(), metadata: [1] }]), "$.events[0].metadata"]);
      cases.push(["metadata string", at([{ ...note(), metadata: "m" }]), "$.events[0].metadata"]);
      for (const [label, request, path] of cases) {
        await expectRejected(store, existing, label, request, { code: "invalid-event", path });
      }
      // A valid tool request with each effect kind is accepted (the checks above are not blanket).
      let expectedSeq = 1;
      for (const kind of ["none", "read", "write", "unknown"]) {
        await store.append({
          ...existing,
          expectedSeq,
          events: tool({ kind, idempotent: kind === "read" }) as never,
        });
        expectedSeq++;
      }
    }),
  },
  {
    group: "bad input",
    name: "bad read, fork and paging arguments are invalid-event with their path; no object at all is invalid-argument",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const { existing } = await setup(store);
      const before = await snapshot(store, existing);
      const loose = store as unknown as Record<string, (request: unknown) => Promise<unknown>>;
      const calls: Array<[string, () => Promise<unknown>, string]> = [
        ["readRun sessionId", () => loose.readRun!({ ...existing, sessionId: "" }), "$.sessionId"],
        ["readRun runId", () => loose.readRun!({ ...existing, runId: "a\u0000" }), "$.runId"],
        ["readRun fromSeq", () => loose.readRun!({ ...existing, fromSeq: -1 }), "$.fromSeq"],
        ["readRun limit", () => loose.readRun!({ ...existing, limit: 0 }), "$.limit"],
        ["readSession sessionId", () => loose.readSession!({ sessionId: 5 }), "$.sessionId"],
        [
          "readSession after",
          () => loose.readSession!({ sessionId: existing.sessionId, after: -1 }),
          "$.after",
        ],
        [
          "readSession limit",
          () => loose.readSession!({ sessionId: existing.sessionId, limit: 1.5 }),
          "$.limit",
        ],
        ["runHead runId", () => loose.runHead!({ ...existing, runId: "" }), "$.runId"],
        ["listRuns sessionId", () => loose.listRuns!("x".repeat(256)), "$.sessionId"],
        ["listSessions limit", () => loose.listSessions!({ limit: 0 }), "$.limit"],
        ["listSessions after", () => loose.listSessions!({ after: "\u0000" }), "$.after"],
        // A key the call does not take: `afterCursor` for `after` read from the start again.
        ["readRun from", () => loose.readRun!({ ...existing, from: 1 }), "$.from"],
        [
          "readSession afterCursor",
          () => loose.readSession!({ sessionId: existing.sessionId, afterCursor: 1 }),
          "$.afterCursor",
        ],
        // A session is read whole: a runId given would be left out, and other runs' events read.
        ["readSession runId", () => loose.readSession!({ ...existing }), "$.runId"],
        ["listSessions cursor", () => loose.listSessions!({ cursor: "s" }), "$.cursor"],
        [
          "fork uptoSeq 0",
          () => loose.fork!({ ...existing, newRunId: "n", uptoSeq: 0 }),
          "$.uptoSeq",
        ],
        [
          "fork uptoSeq 1.5",
          () => loose.fork!({ ...existing, newRunId: "n", uptoSeq: 1.5 }),
          "$.uptoSeq",
        ],
        [
          "fork newRunId",
          () => loose.fork!({ ...existing, newRunId: "", uptoSeq: 1 }),
          "$.newRunId",
        ],
      ];
      for (const [label, call, path] of calls) {
        await expectLedgerError(label, call, { code: "invalid-event", path });
      }
      // An argument that is no object at all, and an event whose field throws when read.
      for (const name of ["readRun", "readSession", "runHead", "listSessions", "fork"]) {
        for (const argument of [null, "s", 7]) {
          await expectLedgerError(`${name}(${argument})`, () => loose[name]!(argument), {
            code: "invalid-argument",
            path: "$",
          });
        }
      }
      const throwing = {
        get type(): never {
          throw new Error("boom");
        },
      };
      await expectLedgerError(
        "an event field that throws when read",
        () => store.append({ ...existing, expectedSeq: 1, events: [note(), throwing as never] }),
        { code: "invalid-event", path: "$.events[1]" },
      );
      await assertUnchanged("bad reads", store, existing, before);
    }),
  },
];
