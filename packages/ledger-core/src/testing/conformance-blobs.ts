import assert from "node:assert/strict";
import { sha256Hex } from "../events/canonical.js";
import { type CaseFactory, expectLedgerError, withStore } from "./conformance-helpers.js";

function sameBytes(label: string, actual: Uint8Array, expected: Uint8Array): void {
  assert.ok(actual instanceof Uint8Array, `${label}: getBlob returns a Uint8Array`);
  assert.equal(actual.byteLength, expected.byteLength, `${label}: length`);
  assert.ok(Buffer.from(actual).equals(Buffer.from(expected)), `${label}: bytes differ`);
}

export const blobCases: CaseFactory = (makeStore) => [
  {
    group: "blobs",
    name: "putBlob is content-addressed and idempotent; strings are UTF-8",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const text = `héllo 😀 ${Math.random()}`;
      const bytes = new TextEncoder().encode(text);
      const ref = await store.putBlob(text);
      assert.equal(ref, `sha256:${sha256Hex(bytes)}`, "ref is sha256 of the UTF-8 bytes");
      assert.equal(await store.putBlob(text), ref, "same string, same ref");
      assert.equal(await store.putBlob(bytes), ref, "string and its UTF-8 bytes agree");
      assert.equal(await store.putBlob(Buffer.from(bytes)), ref, "a Buffer is bytes too");
      sameBytes("string blob", await store.getBlob(ref), bytes);
      const empty = await store.putBlob(new Uint8Array(0));
      assert.equal(empty, `sha256:${sha256Hex(new Uint8Array(0))}`);
      sameBytes("empty blob", await store.getBlob(empty), new Uint8Array(0));
    }),
  },
  {
    group: "blobs",
    name: "binary blobs round trip byte for byte, and callers cannot change them",
    timeoutMs: 60_000,
    run: withStore(makeStore, async (store) => {
      const all = new Uint8Array(512);
      for (let index = 0; index < all.length; index++) all[index] = index % 256;
      all[0] = 0;
      all[all.length - 1] = 0;
      const original = new Uint8Array(all);
      const ref = await store.putBlob(all);
      all[1] = 99; // the caller reuses its buffer
      const read = await store.getBlob(ref);
      sameBytes("binary", read, original);
      read[0] = 7;
      sameBytes("after mutating a read", await store.getBlob(ref), original);
      const invalidUtf8 = new Uint8Array([0xff, 0xfe, 0x00, 0xc3, 0x28, 0xed, 0xa0, 0x80]);
      sameBytes(
        "invalid UTF-8",
        await store.getBlob(await store.putBlob(invalidUtf8)),
        invalidUtf8,
      );
      const big = new Uint8Array(1024 * 1024 + 3);
      for (let index = 0; index < big.length; index++) big[index] = (index * 31) & 0xff;
      const bigRef = await store.putBlob(big);
      assert.equal(bigRef, `sha256:${sha256Hex(big)}`);
      sameBytes("1 MiB blob", await store.getBlob(bigRef), big);
    }),
  },
  {
    group: "blobs",
    name: "getBlob of an unknown ref is not-found; a malformed ref is invalid-event",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const unknown = `sha256:${sha256Hex(`never stored ${Math.random()}`)}`;
      await expectLedgerError("unknown ref", () => store.getBlob(unknown), { code: "not-found" });
      const malformed: unknown[] = [
        "",
        "sha256:",
        "sha256:abc",
        unknown.toUpperCase(),
        `md5:${unknown.slice(7)}`,
        `${unknown}0`,
        unknown.slice(7),
        ` ${unknown}`,
        42,
        null,
      ];
      for (const ref of malformed) {
        await expectLedgerError(`ref ${JSON.stringify(ref)}`, () => store.getBlob(ref as string), {
          code: "invalid-event",
        });
      }
      for (const content of [42, null, { a: 1 }, [1, 2]]) {
        await expectLedgerError(
          `putBlob ${JSON.stringify(content)}`,
          () => store.putBlob(content as never),
          { code: "invalid-event" },
        );
      }
    }),
  },
  {
    group: "blobs",
    name: "bad blob content and batches are refused with their path and store nothing",
    timeoutMs: 30_000,
    run: withStore(makeStore, async (store) => {
      const good = `kept out ${Math.random()}`;
      const goodRef = `sha256:${sha256Hex(good)}`;
      // Encoding a lone surrogate as UTF-8 yields U+FFFD: "a\uD800" and "a\uFFFD" would
      // share one reference and getBlob would return text nobody put.
      for (const text of [`a\uD800 ${good}`, `\uDC00${good}`]) {
        await expectLedgerError(`putBlob ${JSON.stringify(text)}`, () => store.putBlob(text), {
          code: "non-serializable",
          path: "$",
        });
        const replaced = text.replace(/[\uD800-\uDFFF]/, "\uFFFD");
        await expectLedgerError(
          "nothing stored under the replaced text's ref",
          () => store.getBlob(`sha256:${sha256Hex(replaced)}`),
          { code: "not-found" },
        );
      }
      if (store.putBlobs) {
        const putBlobs = store.putBlobs.bind(store);
        for (const [label, contents, code, path] of [
          ["not an array", 42, "invalid-event", "$"],
          ["null", null, "invalid-event", "$"],
          ["a bad item after a good one", [good, 42], "invalid-event", "$[1]"],
          ["a lone surrogate after a good one", [good, "x\uD800"], "non-serializable", "$[1]"],
        ] as const) {
          await expectLedgerError(`putBlobs ${label}`, () => putBlobs(contents as never), {
            code,
            path,
          });
        }
        await expectLedgerError(
          "no item of a refused batch is stored",
          () => store.getBlob(goodRef),
          {
            code: "not-found",
          },
        );
      }
      if (store.getBlobs) {
        const getBlobs = store.getBlobs.bind(store);
        for (const [label, refs, path] of [
          ["not an array", 42, "$"],
          ["null", null, "$"],
          ["a bad ref after a good one", [goodRef, "sha256:abc"], "$[1]"],
        ] as const) {
          await expectLedgerError(`getBlobs ${label}`, () => getBlobs(refs as never), {
            code: "invalid-event",
            path,
          });
        }
      }
    }),
  },
];
