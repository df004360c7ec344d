import { randomBytes } from "node:crypto";
import { inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { blobRef, decodeBlob, encodeBlob } from "../store/blob.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { words } from "./compact.test.data.js";

describe("blob encoding", () => {
  it("compresses text, keeps short or random content raw, and checks the hash on read", async () => {
    const text = new TextEncoder().encode(words(7, 20_000));
    const encoded = encodeBlob(text);
    expect(encoded[0]).toBe(1);
    expect(encoded.byteLength).toBeLessThan(text.byteLength / 3);
    const store = new MemoryEventStore();
    const ref = await store.putBlob(text);
    expect(Buffer.from(await store.getBlob(ref)).equals(Buffer.from(text))).toBe(true);
    const short = encodeBlob(new TextEncoder().encode("hi"));
    expect([...short]).toEqual([0, 104, 105]);
    expect(decodeBlob(ref, encoded)).toEqual(text);
    const damaged = new Uint8Array(encoded);
    damaged[10] = (damaged[10] ?? 0) ^ 0xff;
    expect(() => decodeBlob(ref, damaged)).toThrow(/does not hash/);
    // A blob written before the header existed (raw bytes) still reads.
    expect(decodeBlob(ref, text)).toEqual(text);
  });

  it("content of every size around the encoders' bounds inflates with plain zlib to itself", () => {
    const random = (length: number) => new Uint8Array(randomBytes(length));
    for (const length of [95, 96, 97, 400, 4096, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 70_000]) {
      for (const content of [
        new TextEncoder().encode(words(length, length).slice(0, length)),
        random(length),
      ]) {
        const encoded = encodeBlob(content);
        const body = encoded.subarray(1);
        if (encoded[0] === 1) {
          // The stored stream is plain raw DEFLATE, whichever encoder wrote it.
          expect(Buffer.from(inflateRawSync(body)).equals(Buffer.from(content))).toBe(true);
          expect(encoded.byteLength).toBeLessThan(content.byteLength + 1);
        } else {
          expect(encoded[0]).toBe(0);
          expect(Buffer.from(body).equals(Buffer.from(content))).toBe(true);
        }
        expect(decodeBlob(blobRef(content), encoded)).toEqual(content);
      }
    }
  });
});
