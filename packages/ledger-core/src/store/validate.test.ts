import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { NewEvent } from "../events/types.js";
import { isBlobRef } from "./blob.js";
import type { AppendRequest } from "./event-store.js";
import { validateAppend, validateFork, validateNewEvent, validatePaging } from "./validate.js";

const ref = `sha256:${"a".repeat(64)}`;

function failure(action: () => unknown): { code: string; path: string | undefined } {
  try {
    action();
  } catch (error) {
    if (!LedgerError.isInstance(error)) throw error;
    return { code: error.code, path: error.path };
  }
  throw new Error("accepted");
}

function request(events: unknown, extra: Partial<AppendRequest> = {}): AppendRequest {
  return { sessionId: "s", runId: "r", expectedSeq: 0, events: events as NewEvent[], ...extra };
}

describe("validateAppend", () => {
  it("returns deep copies, fills in a UUIDv7 eventId and a null payload", () => {
    const payload = { list: [{ a: 1 }] };
    const input: NewEvent = {
      type: "x.note",
      payload,
      metadata: { m: [1] },
      actor: { type: "agent", id: "a" },
    };
    const valid = validateAppend(request([input, { type: "input.received" }]));
    payload.list[0]!.a = 2;
    (input.metadata as { m: number[] }).m.push(2);
    expect(valid.events[0]).toMatchObject({
      type: "x.note",
      payload: { list: [{ a: 1 }] },
      metadata: { m: [1] },
    });
    expect(valid.events[0]?.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(valid.events[1]?.payload).toBeNull();
    expect(valid.events[0]?.actor).not.toBe(input.actor);
  });

  it("rejects holes in the events array and in evidenceRefs (they would be written as nothing)", () => {
    const events: unknown[] = [];
    events[1] = { type: "x.note" };
    expect(failure(() => validateAppend(request(events)))).toEqual({
      code: "invalid-event",
      path: "$.events[0]",
    });
    const refs: unknown[] = [];
    refs[1] = ref;
    expect(
      failure(() => validateAppend(request([{ type: "x.note", evidenceRefs: refs }]))),
    ).toEqual({
      code: "invalid-event",
      path: "$.events[0].evidenceRefs[0]",
    });
  });

  it("names the bad field of request and events", () => {
    const cases: Array<[unknown, string]> = [
      [null, "$"],
      [request([{ type: "x.note" }], { sessionId: "" }), "$.sessionId"],
      [request([{ type: "x.note" }], { runId: "a\u0000" }), "$.runId"],
      [request([{ type: "x.note" }], { expectedSeq: -1 }), "$.expectedSeq"],
      [request([]), "$.events"],
      [request([{ type: "x.note" }, { type: "nope" }]), "$.events[1].type"],
      [request([{ type: "x" }]), "$.events[0].type"],
      [request([{ type: `x.${"y".repeat(254)}` }]), "$.events[0].type"],
      [request([{ type: "x.note", seq: 3 }]), "$.events[0].seq"],
      [request([{ type: "x.note", actor: { type: "agent" } }]), "$.events[0].actor.id"],
      [request([{ type: "x.note", metadata: null }]), "$.events[0].metadata"],
      [
        request([{ type: "x.note", evidenceRefs: [ref.toUpperCase()] }]),
        "$.events[0].evidenceRefs[0]",
      ],
      [
        request([
          { type: "tool.requested", payload: { effect: { kind: "write", idempotent: 1 } } },
        ]),
        "$.events[0].payload.effect.idempotent",
      ],
      [
        request([
          { eventId: "e", type: "x.a" },
          { eventId: "e", type: "x.b" },
        ]),
        "$.events[1].eventId",
      ],
    ];
    for (const [input, path] of cases) {
      expect(
        failure(() => validateAppend(input as AppendRequest)),
        path,
      ).toEqual({ code: "invalid-event", path });
    }
    expect(
      failure(() => validateAppend(request([{ type: "x.note", payload: { d: new Date() } }]))),
    ).toEqual({
      code: "non-serializable",
      path: "$.events[0].payload.d",
    });
  });

  it("accepts custom types, every effect kind and a payload-less tool request", () => {
    expect(() => validateNewEvent({ type: `x.${"y".repeat(253)}` }, "$")).not.toThrow();
    for (const kind of ["none", "read", "write", "unknown"]) {
      expect(() =>
        validateNewEvent(
          { type: "tool.requested", payload: { effect: { kind, idempotent: true } } },
          "$",
        ),
      ).not.toThrow();
    }
    expect(() => validateNewEvent({ type: "tool.requested", payload: "args" }, "$")).not.toThrow();
  });
});

describe("validateFork, validatePaging, isBlobRef", () => {
  it("checks ids, uptoSeq, limit and offsets", () => {
    expect(
      failure(() => validateFork({ sessionId: "s", runId: "r", newRunId: "n", uptoSeq: 0 })).path,
    ).toBe("$.uptoSeq");
    expect(
      failure(() => validateFork({ sessionId: "s", runId: "r", newRunId: "", uptoSeq: 1 })).path,
    ).toBe("$.newRunId");
    expect(() =>
      validateFork({ sessionId: "s", runId: "r", newRunId: "n", uptoSeq: 1 }),
    ).not.toThrow();
    expect(failure(() => validatePaging({ limit: 0 })).path).toBe("$.limit");
    expect(failure(() => validatePaging({}, { after: -1 })).path).toBe("$.after");
    expect(() => validatePaging({ limit: 1 }, { after: 0 })).not.toThrow();
    expect(isBlobRef(ref)).toBe(true);
    for (const bad of [ref.toUpperCase(), `${ref}0`, "sha256:", `md5:${"a".repeat(64)}`, 1])
      expect(isBlobRef(bad)).toBe(false);
  });
});
