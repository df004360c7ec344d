import { describe, expect, it } from "vitest";
import { canonicalJson, hashJson, jsonString, sha256Hex } from "./canonical.js";
import type { JsonObject, JsonValue } from "./json.js";
import { toPlainJson } from "./json.js";

/** A double from its IEEE 754 bit pattern, as RFC 8785 Appendix B lists them. */
function fromBits(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

describe("canonicalJson (RFC 8785)", () => {
  it("formats numbers as RFC 8785 Appendix B says", () => {
    const vectors: Array<[string, string]> = [
      ["0000000000000000", "0"],
      ["8000000000000000", "0"], // -0 serialises as 0 (and is rejected earlier by toPlainJson)
      ["0000000000000001", "5e-324"],
      ["8000000000000001", "-5e-324"],
      ["7fefffffffffffff", "1.7976931348623157e+308"],
      ["ffefffffffffffff", "-1.7976931348623157e+308"],
      ["4340000000000000", "9007199254740992"],
      ["c340000000000000", "-9007199254740992"],
      ["4430000000000000", "295147905179352830000"],
      ["44b52d02c7e14af5", "9.999999999999997e+22"],
      ["44b52d02c7e14af6", "1e+23"],
      ["44b52d02c7e14af7", "1.0000000000000001e+23"],
      ["444b1ae4d6e2ef4e", "999999999999999700000"],
      ["444b1ae4d6e2ef4f", "999999999999999900000"],
      ["444b1ae4d6e2ef50", "1e+21"],
      ["3eb0c6f7a0b5ed8c", "9.999999999999997e-7"],
      ["3eb0c6f7a0b5ed8d", "0.000001"],
      ["41b3de4355555553", "333333333.3333332"],
      ["41b3de4355555554", "333333333.33333325"],
      ["41b3de4355555555", "333333333.3333333"],
      ["41b3de4355555556", "333333333.3333334"],
      ["41b3de4355555557", "333333333.33333343"],
      ["becbf647612f3696", "-0.0000033333333333333333"],
      ["43143ff3c1cb0959", "1424953923781206.2"],
    ];
    for (const [bits, expected] of vectors)
      expect(canonicalJson(fromBits(bits)), bits).toBe(expected);
    expect(canonicalJson(1e21)).toBe("1e+21");
    expect(canonicalJson(1e-7)).toBe("1e-7");
    expect(canonicalJson(1e20)).toBe("100000000000000000000");
    expect(canonicalJson(4.5)).toBe("4.5");
  });

  it("canonicalises the RFC 8785 sample object", () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        '"string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals": [null, true, false]}',
    ) as JsonValue;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it("sorts keys by UTF-16 code units, not code points or locale", () => {
    const input = {
      "\u20ac": "Euro Sign",
      "\r": "Carriage Return",
      "\ufb33": "Hebrew Letter Dalet With Dagesh",
      "1": "One",
      "\ud83d\ude00": "Emoji: Grinning Face",
      "\u0080": "Control",
      "\u00f6": "Latin Small Letter O With Diaeresis",
    };
    const keys = Object.keys(JSON.parse(canonicalJson(input)) as object);
    // Integer-like keys come first in JS objects, so check the serialised order instead.
    const order = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\ud83d\ude00", "\ufb33"];
    const text = canonicalJson(input);
    const positions = order.map((key) => text.indexOf(JSON.stringify(key)));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
    expect(new Set(keys)).toEqual(new Set(order));
    expect(canonicalJson({ b: 1, a: 2, "10": 3, "9": 4, A: 5 })).toBe(
      '{"10":3,"9":4,"A":5,"a":2,"b":1}',
    );
  });

  it("orders keys as Array.prototype.sort does, for objects of any size and key order", () => {
    // The reference: JSON.stringify's text of each member, the keys sorted by sort().
    const reference = (value: JsonValue): string => {
      if (value === null || typeof value !== "object") return JSON.stringify(value);
      if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
      const members = Object.keys(value).sort();
      return `{${members.map((key) => `${JSON.stringify(key)}:${reference(value[key] as JsonValue)}`).join(",")}}`;
    };
    const units = ["a", "B", "_", "0", "9", "é", "\u20ac", "\ud83d\ude00", "\ufb33", " "];
    let seed = 11;
    const next = (bound: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % bound;
    };
    for (let size = 0; size <= 40; size++) {
      for (let round = 0; round < 20; round++) {
        const object: JsonObject = {};
        for (let index = 0; index < size; index++) {
          let key = "";
          for (let length = 1 + next(4); length > 0; length--) key += units[next(units.length)];
          object[key] = next(3) === 0 ? { [key]: index, a: [true, null, -1.5] } : index;
        }
        expect(canonicalJson(object)).toBe(reference(object));
      }
    }
    expect(canonicalJson([Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, false])).toBe(
      JSON.stringify([Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, false]),
    );
  });

  it("writes arrays in order, nests, and has no whitespace", () => {
    expect(canonicalJson([56, { d: true, "10": null, "1": [] }])).toBe(
      '[56,{"1":[],"10":null,"d":true}]',
    );
    expect(canonicalJson({ a: { c: [1, { z: 0, y: "" }], b: {} } })).toBe(
      '{"a":{"b":{},"c":[1,{"y":"","z":0}]}}',
    );
    expect(canonicalJson(null)).toBe("null");
    expect(canonicalJson("")).toBe('""');
    expect(canonicalJson([])).toBe("[]");
    expect(canonicalJson({})).toBe("{}");
  });

  it("escapes strings as JSON.stringify does (control characters, not U+2028 or non-ASCII)", () => {
    expect(canonicalJson("\u0000\u001f\u007f\u2028\u2029é😀")).toBe(
      '"\\u0000\\u001f\u007f\u2028\u2029é😀"',
    );
    expect(canonicalJson('\b\f\n\r\t"\\/')).toBe('"\\b\\f\\n\\r\\t\\"\\\\/"');
  });

  it("skips undefined members; the same value in any key order hashes the same", () => {
    expect(canonicalJson({ a: 1, b: undefined } as unknown as JsonValue)).toBe('{"a":1}');
    expect(canonicalJson({ b: undefined, a: 1 } as unknown as JsonValue)).toBe('{"a":1}');
    expect(hashJson({ x: [1, { b: 2, a: 1 }], y: "z" })).toBe(
      hashJson({ y: "z", x: [1, { a: 1, b: 2 }] }),
    );
    expect(hashJson({ a: 1 })).not.toBe(hashJson({ a: 2 }));
    expect(hashJson([1, 2])).not.toBe(hashJson([2, 1]));
  });

  it("hashes with sha256 over UTF-8", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
    expect(sha256Hex("é")).toBe(sha256Hex(new TextEncoder().encode("é")));
    expect(hashJson({ a: 1 })).toBe(sha256Hex('{"a":1}'));
  });

  it("never sees the values RFC 8785 cannot encode: toPlainJson rejects them first", () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, -0, "\ud800"]) {
      expect(() => toPlainJson(value)).toThrow(
        expect.objectContaining({ code: "non-serializable" }),
      );
    }
  });
});

describe("jsonString", () => {
  it("writes every string exactly as JSON.stringify does", () => {
    const samples = [
      "",
      "0190a0b0-0000-7000-8000-000000000001",
      'a"b',
      "a\\b",
      "tab\there",
      "\u0000\u001f\u007f",
      "é€ 😀",
      "\uD83D",
      "x\uDE00y",
      "\u2028\u2029",
    ];
    // Random strings over the code units that matter: ASCII, controls, quotes, surrogates.
    const units = [0x00, 0x1f, 0x20, 0x22, 0x5c, 0x41, 0x7f, 0xe9, 0xd83d, 0xde00, 0xffff];
    let seed = 7;
    for (let index = 0; index < 2000; index++) {
      let text = "";
      for (let length = index % 9; length > 0; length--) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        text += String.fromCharCode(units[seed % units.length] as number);
      }
      samples.push(text);
    }
    for (const text of samples) expect(jsonString(text)).toBe(JSON.stringify(text));
  });
});
