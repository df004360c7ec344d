import { describe, expect, it } from "vitest";
import { canonicalJson, sha256Hex } from "./canonical.js";
import { computeEventHash, hashedContent } from "./hash-chain.js";
import type { LedgerEvent } from "./types.js";

const event: LedgerEvent = {
  schemaVersion: 1,
  eventId: "e-1",
  sessionId: "s",
  runId: "r",
  seq: 3,
  commitCursor: 9,
  type: "tool.requested",
  stepId: "st",
  attemptId: "a",
  causedByEventId: "e-0",
  actor: { type: "agent", id: "x", framework: "f" },
  recordedAt: "2026-11-29T08:00:00.000Z",
  payload: { z: 1, a: [{ "b c": "é\u2028" }], m: null },
  metadata: { key: "value" },
  prevHash: "ab",
  hash: "ignored",
};

describe("computeEventHash", () => {
  it("equals sha256 of the RFC 8785 form without hash and commitCursor", () => {
    expect(computeEventHash(event)).toBe(sha256Hex(canonicalJson(hashedContent(event))));
  });

  it("covers a field someone added to a stored row", () => {
    const edited = { ...event, extra: "sneaked in" } as LedgerEvent;
    expect(computeEventHash(edited)).not.toBe(computeEventHash(event));
    expect(computeEventHash(edited)).toBe(sha256Hex(canonicalJson(hashedContent(edited))));
  });

  it("ignores commitCursor and hash but covers every other field", () => {
    expect(computeEventHash({ ...event, commitCursor: 1, hash: "x" })).toBe(
      computeEventHash(event),
    );
    for (const change of [
      { seq: 4 },
      { recordedAt: "2026-11-29T08:00:00.001Z" },
      { payload: { z: 2 } },
      { prevHash: null },
    ]) {
      expect(computeEventHash({ ...event, ...change } as LedgerEvent)).not.toBe(
        computeEventHash(event),
      );
    }
  });
});
