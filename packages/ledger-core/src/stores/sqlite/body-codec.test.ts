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
