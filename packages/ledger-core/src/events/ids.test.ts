import { describe, expect, it } from "vitest";
import { LedgerError } from "./errors.js";
import { assertId, compareIds, isValidId, uuidv7 } from "./ids.js";

const format = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("uuidv7", () => {
  it("has the RFC 9562 layout: version 7, variant 10, the time in the first 48 bits", () => {
    const before = Date.now();
    const id = uuidv7();
    const after = Date.now();
    expect(id).toMatch(format);
    const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
    // The counter may run ahead of the clock by a few ms when many ids are made in one ms.
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(after + 50);
  });

  it("sorts in creation order, also for many ids in the same millisecond", () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());
    for (let index = 1; index < ids.length; index++) {
      expect(ids[index]! > ids[index - 1]!, `${ids[index - 1]} < ${ids[index]}`).toBe(true);
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 100)) expect(id).toMatch(format);
  });

  it("stays monotonic when the clock goes backwards", () => {
    const realNow = Date.now;
    try {
      const first = uuidv7();
      Date.now = () => realNow() - 60_000;
      const second = uuidv7();
      expect(second > first).toBe(true);
      expect(second).toMatch(format);
    } finally {
      Date.now = realNow;
    }
  });
});

describe("ids", () => {
  it("accepts opaque strings of 1-255 characters", () => {
    for (const id of [
      "a",
      "x".repeat(255),
      "séance/😀",
      "'; DROP TABLE events; --",
      "a:b*{c}?",
      " ",
    ]) {
      expect(isValidId(id), id).toBe(true);
      expect(() => assertId(id, "$.id")).not.toThrow();
    }
  });

  it("rejects empty, too long, control characters and non-strings as invalid-event at the path", () => {
    const bad: unknown[] = [
      "",
      "x".repeat(256),
      "a\u0000",
      "a\n",
      "\t",
      "a\u007f",
      "a\u0085",
      "a\u009f",
      1,
      null,
      undefined,
      {},
      ["a"],
    ];
    for (const id of bad) {
      expect(isValidId(id)).toBe(false);
      let caught: unknown;
      try {
        assertId(id, "$.events[1].stepId");
      } catch (error) {
        caught = error;
      }
      expect(LedgerError.isInstance(caught, "invalid-event"), String(id)).toBe(true);
      expect((caught as LedgerError).path).toBe("$.events[1].stepId");
    }
  });
});

describe("ids with lone surrogates", () => {
  it("are rejected, so no store can merge two ids through UTF-8", async () => {
    const { isValidId, assertId } = await import("./ids.js");
    expect(isValidId("a\uD800")).toBe(false);
    expect(isValidId("\uDC00b")).toBe(false);
    expect(isValidId("ok\uD83D\uDE00")).toBe(true);
    expect(() => assertId("a\uD800", "$.sessionId")).toThrow(/lone surrogate/);
  });
});

describe("compareIds", () => {
  it("orders by code point, as the UTF-8 bytes sort, where UTF-16 units would not", () => {
    // U+FF61 is one UTF-16 unit (0xFF61); U+1F600 is the pair 0xD83D 0xDE00.
    const ids = [
      "a\u{1F600}",
      "a\uFF61",
      "a\uD7FF",
      "a\uE000",
      "a",
      "ab",
      "a\u00e9",
      "a\u{10FFFF}",
    ];
    const byBytes = [...ids].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...ids].sort(compareIds)).toEqual(byBytes);
    expect(byBytes).toEqual([
      "a",
      "ab",
      "a\u00e9",
      "a\uD7FF",
      "a\uE000",
      "a\uFF61",
      "a\u{1F600}",
      "a\u{10FFFF}",
    ]);
    expect([...ids].sort()).not.toEqual(byBytes);
    expect(compareIds("x", "x")).toBe(0);
    expect(Math.sign(compareIds("\u{1F600}", "\uFFFF"))).toBe(1);
    expect(Math.sign(compareIds("\uFFFF", "\u{1F600}"))).toBe(-1);
  });

  it("agrees with the UTF-8 byte order on random ids", () => {
    const pieces = [
      "a",
      "z",
      "\u00e9",
      "\u0800",
      "\uD7FF",
      "\uE000",
      "\uFFFD",
      "\u{10000}",
      "\u{1F600}",
    ];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let trial = 0; trial < 2000; trial++) {
      const make = () =>
        Array.from({ length: 1 + (next() % 4) }, () => pieces[next() % pieces.length]).join("");
      const a = make();
      const b = make();
      const expected = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(Math.sign(compareIds(a, b)), `${a} vs ${b}`).toBe(expected);
    }
  });
});
