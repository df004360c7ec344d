import { deflateRawSync, inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { BODY_DICTIONARY_V1, decodeBody, encodeBody } from "./body-codec.js";

/** An event body of about `length` characters; `unit` fills its text. */
function body(length: number, unit = "the parcel shipped yesterday, "): string {
  const head = `{"schemaVersion":1,"eventId":"01a226d4-2f2c-7002-aa59-4be6abeb0fcb","type":"tool.completed","payload":{"result":"`;
  const text = unit
    .repeat(Math.ceil(length / unit.length))
    .slice(0, Math.max(0, length - head.length - 3));
  return `${head}${text}"}}`;
}

function storedBlob(value: string | Buffer): Buffer {
  if (typeof value === "string") throw new Error("expected a BLOB");
  return value;
}

describe("encodeBody / decodeBody", () => {
  it("keeps a short body as TEXT", () => {
    const short = body(300);
    expect(encodeBody(short)).toBe(short);
    expect(decodeBody(short)).toBe(short);
  });

  it("stores longer bodies as header 0x01 + deflate-raw with the dictionary, up to and past 16 KiB", () => {
    for (const length of [512, 513, 1000, 4000, 16383, 16384, 16385, 40_000]) {
      const json = body(length);
      const stored = storedBlob(encodeBody(json));
      expect(stored[0]).toBe(1);
      // What readers did before this encoder, and still do.
      const inflated = inflateRawSync(stored.subarray(1), { dictionary: BODY_DICTIONARY_V1 });
      expect(inflated.toString("utf8")).toBe(json);
      expect(decodeBody(stored)).toBe(json);
    }
  });

  it("round trips multi-byte text on both sides of the 16 KiB limit (in UTF-8 bytes)", () => {
    for (const json of [body(3000, "é😀 "), body(600, "ñ"), body(5000, "中文")]) {
      expect(decodeBody(encodeBody(json))).toBe(json);
    }
    // 7000 characters, 21 KB of UTF-8: zlib writes it, byte for byte as before.
    const wide = body(7000, "中文");
    const zlib = deflateRawSync(wide, { dictionary: BODY_DICTIONARY_V1 });
    expect(storedBlob(encodeBody(wide))).toEqual(Buffer.concat([Buffer.from([1]), zlib]));
    expect(decodeBody(encodeBody(wide))).toBe(wide);
  });

  it("still reads rows zlib wrote", () => {
    const json = body(2000);
    const compressed = deflateRawSync(json, { dictionary: BODY_DICTIONARY_V1 });
    expect(decodeBody(Buffer.concat([Buffer.from([1]), compressed]))).toBe(json);
  });

  it("writes bodies of 512-1024 bytes with the one code prepared from its samples, and longer ones with their own", () => {
    // Bodies of ids and hashes, as events mostly are, in printable ASCII, no two alike.
    const next = (() => {
      let state = 7;
      return () => {
        state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
        return state >>> 8;
      };
    })();
    const hex = (length: number) =>
      Array.from({ length }, () => (next() & 15).toString(16)).join("");
    const modelEvent = (length: number) => {
      let text = "";
      while (text.length < length) text += `"hash":"${hex(64)}","stepId":"01a24a0f-${hex(12)}",`;
      return body(length, text);
    };
    const streams = [512, 513, 766, 1000, 1023, 1024, 1025, 1500].map((length) => {
      const json = modelEvent(length);
      expect(Buffer.byteLength(json)).toBe(length);
      const stored = storedBlob(encodeBody(json));
      expect(decodeBody(stored)).toBe(json);
      const inflated = inflateRawSync(stored.subarray(1), { dictionary: BODY_DICTIONARY_V1 });
      expect(inflated.toString("utf8")).toBe(json);
      return { length, stored };
    });
    // Every dynamic block (type 2) of 1 KiB or less opens with the same code.
    const prepared = streams.filter(({ length }) => length <= 1024);
    const header = (stored: Buffer) => stored.subarray(0, 40);
    for (const { length, stored } of prepared) {
      expect((stored[1]! >> 1) & 3, `${length} bytes`).toBe(2);
      expect(header(stored), `${length} bytes`).toEqual(header(prepared[0]!.stored));
    }
    for (const { length, stored } of streams.filter(({ length }) => length > 1024)) {
      expect(header(stored), `${length} bytes`).not.toEqual(header(prepared[0]!.stored));
    }
  });

  it("still reads a body the encoder wrote before it had a prepared code", () => {
    // The suites' model event, stored by the previous build (its own dynamic code, 341 bytes).
    const json =
      '{"schemaVersion":1,"eventId":"01a24a0f-c38e-7000-b642-9eb75a827e48","sessionId":"01a24a0f-c380-7000-91c5-6ffee1be945d","runId":"01a24a0f-c381-7000-8a13-c658a0842d86","seq":1,"type":"model.requested","stepId":"01a24a0f-c38d-7000-bbd1-4f81ac1b57ac","attemptId":"01a24a0f-c38d-7001-ac84-64ef0228d47e","actor":{"type":"agent","id":"bench"},"recordedAt":"2026-12-06T06:34:36.814Z","payload":{"request":{"model":"bench-model","messages":[{"role":"user","content":"What is the weather in Lisbon today?"}],"temperature":0},"requestHash":"cc56f72b8dc5d249bb8c429f336f6202736146611811fbb6703285bf92ea74a3"},"prevHash":"626ad9062346d815138bb2e88ff4d71549e86d6c8dd289681657518c991a9a7c","hash":"3c2b8c17448af54ff7aaee41c275887dbb19a064e2338fe4de2ed9dfa2f9ae2e","commitCursor":2}';
    const stored = Buffer.from(
      "AYWVzUpkQQyFX+XivoZKKpVKuZkXmOWA4C6pSujetKAN4sJ3l2u3cm3/9kkI5zvJ+VmfDIqkOdIo4qnlnJMxYepurapgc5ILDbct+dTSYdTEEe5g3qm+5upZ5205nMpFoaTBVTQL4RR+YwEXIb814zuQ7cB5XtkmJAoBHWC16biA9qkFkg6hxOSREWVSW9/bj2DND2P3BUjkBJgy/898Xei68B8Buv3teq5ex6XTLb0n+ekxfxcWNzs9LvuH5bjz5dH1uPP7ZX9Y/u0f7O6wHO+mPv29el5z48PP/3RkY1SOhiZz1InUzWQQ9iiFgzFjKwzEDCAAYcYtF5Rq0dG1kZZVhI33GFlnz4yFeApUKGKGLhJBs0Gl7sKTh8yJ0lmAa6sgo3fQrm1ldfZuGWgyoBGJRqWIpupOMLBVkTbNoGtmcixFwmk6+uwzFKOr44rwo/fx+QU=",
      "base64",
    );
    expect(stored.byteLength).toBe(341);
    expect(decodeBody(stored)).toBe(json);
    // Written now, it takes the prepared code: a few percent more bytes, the same JSON back.
    const now = storedBlob(encodeBody(json));
    expect(now.byteLength).toBeLessThanOrEqual(341 * 1.1);
    expect(decodeBody(now)).toBe(json);
  });

  it("stays about as small as zlib's default level", () => {
    for (const length of [600, 2000, 8000]) {
      const json = body(length, "order 4be6abeb0fcb refund approved; ");
      const ours = storedBlob(encodeBody(json)).byteLength - 1;
      const zlib = deflateRawSync(json, { dictionary: BODY_DICTIONARY_V1 }).byteLength;
      expect(ours, `${length} characters`).toBeLessThanOrEqual(zlib * 1.08);
    }
  });

  it("refuses a BLOB it cannot decode as tamper-detected, naming the place it is given", () => {
    const refusal = (value: unknown) => {
      try {
        decodeBody(value, () => ({ sessionId: "s", runId: "r", seq: 4 }));
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const value of [Buffer.from([1, 0xff, 0xff]), Buffer.from([9, 1]), null]) {
      const caught = refusal(value);
      expect(LedgerError.isInstance(caught, "tamper-detected")).toBe(true);
      expect((caught as LedgerError).details).toMatchObject({ runId: "r", seq: 4 });
    }
  });
});
