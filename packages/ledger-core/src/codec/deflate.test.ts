import { deflateRawSync, inflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { BODY_DICTIONARY_V1 } from "../stores/sqlite/body-codec.js";
import {
  CANNED_MAX_INPUT_BYTES,
  deflateRaw,
  deflateRawWithDictionary,
  MAX_DEFLATE_INPUT_BYTES,
  type PreparedDictionary,
  prepareDictionary,
} from "./deflate.js";

/** mulberry32: the same cases on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

type Random = () => number;
const pick = <T>(next: Random, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
const hex = (next: Random, length: number) =>
  Buffer.from(Uint8Array.from({ length: (length + 1) >> 1 }, () => next() * 256))
    .toString("hex")
    .slice(0, length);
const uuid = (next: Random) =>
  `${hex(next, 8)}-${hex(next, 4)}-7${hex(next, 3)}-a${hex(next, 3)}-${hex(next, 12)}`;
const WORDS = ["the", "weather", "in", "Lisbon", "today", "is", "sunny", "tool", "call", "result"];
const UNICODE = ["é", "ñ", "ü", "中文", "日本語", "😀", "🚀", "Ω", "→", "ß", "한국어", "\u0000"];
const sentence = (next: Random, words: number) =>
  Array.from({ length: words }, () => pick(next, WORDS)).join(" ");

/** Text shaped like a ledger event body: ids, hashes, blob markers, English. */
function ledgerLike(next: Random, length: number): string {
  let text = `{"schemaVersion":1,"eventId":"${uuid(next)}","runId":"${uuid(next)}","seq":${Math.floor(next() * 9999)},"type":"model.completed","payload":{`;
  while (text.length < length) {
    const choice = next();
    if (choice < 0.2) text += `{"$ledger":"json","ref":"sha256:${hex(next, 64)}"},`;
    else if (choice < 0.4) text += `"hash":"${hex(next, 64)}","stepId":"${uuid(next)}",`;
    else if (choice < 0.5) text += `"content":"${pick(next, UNICODE)}${sentence(next, 3)}",`;
    else text += `"text":"${sentence(next, 1 + Math.floor(next() * 12))}",`;
  }
  return text;
}

/** Bytes of one kind, exactly `length` long. */
const KINDS: Record<string, (next: Random, length: number) => Uint8Array> = {
  ledger: (next, length) => Buffer.from(ledgerLike(next, length)).subarray(0, length),
  hex: (next, length) => Buffer.from(hex(next, length)),
  unicode: (next, length) => {
    let text = "";
    while (text.length < length) text += pick(next, [...UNICODE, " ", "a", "b"]);
    return Buffer.from(text).subarray(0, length); // may cut a character: bytes are bytes
  },
  random: (next, length) => Uint8Array.from({ length }, () => Math.floor(next() * 256)),
  runs: (next, length) => {
    const bytes = new Uint8Array(length);
    for (let index = 0; index < length; ) {
      const run = 1 + Math.floor(next() * (next() < 0.5 ? 600 : 8));
      bytes.fill(Math.floor(next() * 4), index, index + run);
      index += run;
    }
    return bytes;
  },
  repeats: (next, length) => {
    const unit = KINDS.random!(next, 1 + Math.floor(next() * 300));
    const bytes = new Uint8Array(length);
    for (let index = 0; index < length; index++) bytes[index] = unit[index % unit.length]!;
    if (length > 0 && next() < 0.5) {
      const at = Math.floor(next() * length);
      bytes[at] = bytes[at]! ^ 0x55;
    }
    return bytes;
  },
};

const LENGTHS = [0, 1, 2, 3, 4, 5, 6, 257, 258, 259, 260, 511, 512, 513, 514, 16383, 16384];

function roundTrip(input: Uint8Array, dictionary: Uint8Array): Buffer {
  const compressed = deflateRawWithDictionary(input, prepareDictionaryCached(dictionary));
  const options = dictionary.byteLength > 0 ? { dictionary } : {};
  const restored = inflateRawSync(compressed, options);
  expect(Buffer.compare(restored, input), `${input.byteLength} bytes`).toBe(0);
  return compressed;
}

const prepared = new Map<Uint8Array, ReturnType<typeof prepareDictionary>>();
function prepareDictionaryCached(dictionary: Uint8Array) {
  let entry = prepared.get(dictionary);
  if (entry === undefined) {
    entry = prepareDictionary(dictionary);
    prepared.set(dictionary, entry);
  }
  return entry;
}

const DICTIONARIES: Record<string, Uint8Array> = {
  ledger: BODY_DICTIONARY_V1,
  empty: new Uint8Array(0),
  tiny: Buffer.from("ab"),
  small: Buffer.from('"type":"tool.completed","payload":{"hash":"'),
  // Longer than the 16 KiB the encoder keeps: its head is out of reach, its tail is not.
  large: KINDS.random!(random(7), 20_000),
};

describe("deflateRawWithDictionary", () => {
  for (const [dictionaryName, dictionary] of Object.entries(DICTIONARIES)) {
    it(`round trips every kind and edge length with the ${dictionaryName} dictionary`, () => {
      const next = random(dictionary.byteLength + 1);
      for (const make of Object.values(KINDS)) {
        for (const length of LENGTHS) roundTrip(make(next, length), dictionary);
        for (let index = 0; index < 60; index++) {
          // Mostly short, some up to the 16 KiB limit.
          roundTrip(make(next, Math.floor(next() ** 3 * MAX_DEFLATE_INPUT_BYTES)), dictionary);
        }
      }
    });
  }

  it("round trips thousands of short mixed inputs (where the block kinds change places)", () => {
    const next = random(42);
    const kinds = Object.values(KINDS);
    const dictionaries = Object.values(DICTIONARIES);
    const blockKinds = new Set<number>();
    for (let index = 0; index < 3000; index++) {
      const length = Math.floor(next() * (next() < 0.7 ? 1200 : 4000));
      const parts = 1 + Math.floor(next() * 3);
      const input = Buffer.concat(
        Array.from({ length: parts }, () => pick(next, kinds)(next, Math.ceil(length / parts))),
      );
      blockKinds.add((roundTrip(input, pick(next, dictionaries))[0]! >> 1) & 3);
    }
    expect([...blockKinds].sort()).toEqual([0, 1, 2]); // stored, fixed and dynamic blocks
  });

  it("keeps no state between calls: the same input gives the same bytes, whatever came before", () => {
    const next = random(9);
    const input = KINDS.ledger!(next, 3000);
    const ledger = prepareDictionaryCached(BODY_DICTIONARY_V1);
    const first = deflateRawWithDictionary(input, ledger);
    deflateRawWithDictionary(
      KINDS.runs!(next, 16000),
      prepareDictionaryCached(DICTIONARIES.large!),
    );
    deflateRawWithDictionary(KINDS.ledger!(next, 5000), ledger);
    expect(deflateRawWithDictionary(input, ledger)).toEqual(first);
  });

  it("uses matches of the maximum length 258", () => {
    const input = new Uint8Array(MAX_DEFLATE_INPUT_BYTES).fill(0x61);
    expect(roundTrip(input, BODY_DICTIONARY_V1).byteLength).toBeLessThan(100);
  });

  it("reaches back across the whole window, into the dictionary's kept tail", () => {
    // A 16 KiB random dictionary; the input ends with the dictionary's first 300 bytes, at a
    // distance of about 32 KiB. Without that match the random input stays incompressible.
    const dictionary = KINDS.random!(random(3), MAX_DEFLATE_INPUT_BYTES);
    const head = KINDS.random!(random(4), MAX_DEFLATE_INPUT_BYTES - 300);
    const input = Buffer.concat([head, dictionary.subarray(0, 300)]);
    const compressed = roundTrip(input, dictionary);
    expect(compressed.byteLength).toBeLessThan(head.byteLength + 100);
  });

  it("stores incompressible input in a stored block, 5 bytes over its size", () => {
    const input = KINDS.random!(random(5), 4000);
    expect(roundTrip(input, BODY_DICTIONARY_V1).byteLength).toBe(4005);
  });

  it("writes an empty input as zlib does", () => {
    const empty = new Uint8Array(0);
    expect(roundTrip(empty, BODY_DICTIONARY_V1)).toEqual(
      deflateRawSync(empty, { dictionary: BODY_DICTIONARY_V1 }),
    );
  });

  it("stays within 8% of zlib's default level on a model event", () => {
    const body = Buffer.from(MODEL_EVENT);
    const ours = roundTrip(body, BODY_DICTIONARY_V1).byteLength;
    const zlib = deflateRawSync(body, { dictionary: BODY_DICTIONARY_V1 }).byteLength;
    expect(ours).toBeLessThanOrEqual(zlib * 1.08);
  });

  it("stays within 8% of zlib's default level on ledger-like and low-entropy bodies", () => {
    const next = random(11);
    const fewWords = (length: number) => {
      let text = '{"content":"';
      while (text.length < length) text += `${pick(next, ["Olá", "中文", "😀", "order", "late"])} `;
      return text;
    };
    const logLines = (length: number) => {
      let text = '{"stdout":"';
      while (text.length < length) {
        text += `2026-11-29T10:22:${10 + Math.floor(next() * 50)}Z INFO worker ${Math.floor(next() * 4)} processed job ${uuid(next)} in ${Math.floor(next() * 900)}ms\\n`;
      }
      return text;
    };
    for (const make of [(length: number) => ledgerLike(next, length), fewWords, logLines]) {
      for (const length of [500, 1000, 2000, 4000, 8000, 16000]) {
        const body = Buffer.from(make(length)).subarray(0, MAX_DEFLATE_INPUT_BYTES);
        const ours = roundTrip(body, BODY_DICTIONARY_V1).byteLength;
        const zlib = deflateRawSync(body, { dictionary: BODY_DICTIONARY_V1 }).byteLength;
        expect(ours, `${length} bytes: ${body.subarray(0, 40)}`).toBeLessThanOrEqual(zlib * 1.08);
      }
    }
  });

  it("refuses an input over 16 KiB", () => {
    let caught: unknown;
    try {
      const input = new Uint8Array(MAX_DEFLATE_INPUT_BYTES + 1);
      deflateRawWithDictionary(input, prepareDictionaryCached(BODY_DICTIONARY_V1));
    } catch (error) {
      caught = error;
    }
    expect(LedgerError.isInstance(caught, "invalid-argument")).toBe(true);
  });
});

describe("a dictionary prepared with samples (short inputs take its code)", () => {
  const next = random(57);
  /** A ledger-like body of `length` bytes in printable ASCII, as JSON.stringify writes English. */
  const asciiBody = (length: number) =>
    Buffer.from(ledgerLike(next, length).replace(/[^\x20-\x7e]/gu, "?")).subarray(0, length);
  const samples = Array.from({ length: 4 }, () => asciiBody(800));
  const withSamples = prepareDictionary(BODY_DICTIONARY_V1, samples);
  const plain = prepareDictionaryCached(BODY_DICTIONARY_V1);
  const canned = withSamples.canned!;

  /** Compressed with `withSamples`; checked against zlib; which kind of block came out. */
  function written(input: Uint8Array): {
    kind: "stored" | "fixed" | "canned" | "own";
    bytes: number;
  } {
    const compressed = deflateRawWithDictionary(input, withSamples);
    const restored = inflateRawSync(compressed, { dictionary: BODY_DICTIONARY_V1 });
    expect(Buffer.compare(restored, input), `${input.byteLength} bytes`).toBe(0);
    const type = (compressed[0]! >> 1) & 3;
    const bytes = compressed.byteLength;
    if (type === 0) return { kind: "stored", bytes };
    if (type === 1) return { kind: "fixed", bytes };
    const prefix = compressed.subarray(0, canned.headerBytes.byteLength);
    return { kind: Buffer.from(prefix).equals(canned.headerBytes) ? "canned" : "own", bytes };
  }

  it("writes a short ledger body with the prepared code, and a longer one with its own", () => {
    for (const length of [512, 600, CANNED_MAX_INPUT_BYTES - 1, CANNED_MAX_INPUT_BYTES]) {
      expect(written(asciiBody(length)).kind, `${length} bytes`).toBe("canned");
    }
    for (const length of [CANNED_MAX_INPUT_BYTES + 1, 4000]) {
      expect(written(asciiBody(length)).kind, `${length} bytes`).toBe("own");
    }
    // Text beyond ASCII has bytes the prepared code has no code for.
    expect(written(Buffer.from(`${asciiBody(600)}中文`)).kind).toBe("own");
  });

  it("writes the model event within 10% of its own code's size and of zlib's", () => {
    const body = Buffer.from(MODEL_EVENT);
    const ours = written(body);
    expect(ours.kind).toBe("canned");
    const own = deflateRawWithDictionary(body, plain).byteLength;
    const zlib = deflateRawSync(body, { dictionary: BODY_DICTIONARY_V1 }).byteLength;
    expect(ours.bytes).toBeLessThanOrEqual(own * 1.1);
    expect(ours.bytes).toBeLessThanOrEqual(zlib * 1.1);
  });

  it("round trips every kind, length and edge: a symbol without a code (bytes over 0x7e, control bytes) builds its own", () => {
    const kinds = new Map<string, number>();
    const count = (input: Uint8Array) => {
      const { kind } = written(input);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    };
    const edges = [0, 1, 4, 5, 60, 61, 62, 63, 64, 65, 70, 257, 258, 259, 511, 512, 513];
    for (const length of [...edges, CANNED_MAX_INPUT_BYTES - 1, CANNED_MAX_INPUT_BYTES]) {
      for (const make of Object.values(KINDS)) count(make(next, length));
      count(Buffer.from(ledgerLike(next, length)).subarray(0, length));
      // Printable ASCII only: every literal has a code, so stored, fixed or the prepared one.
      count(Uint8Array.from({ length }, () => 0x20 + Math.floor(next() * 95)));
      count(Uint8Array.from({ length }, () => pick(next, [0x30, 0x31, 0x7e])));
    }
    for (let index = 0; index < 2000; index++) {
      const length = Math.floor(next() * (CANNED_MAX_INPUT_BYTES + 200));
      count(pick(next, Object.values(KINDS))(next, length));
      count(Buffer.from(ledgerLike(next, length)).subarray(0, length));
    }
    expect([...kinds.keys()].sort()).toEqual(["canned", "fixed", "own", "stored"]);
  });

  it("writes no more than storing or the fixed code would, and ledger bodies of 512 bytes and up with the prepared code", () => {
    // With the fixed code a printable byte takes 8 bits and a match of 4 or more at most 31,
    // so the block (3 bits, the data, 7 for its end) takes at most 8 bits per input byte.
    const fixedSize = (input: Uint8Array) => Math.ceil((3 + 8 * input.byteLength + 7) / 8);
    for (let index = 0; index < 300; index++) {
      const length = 1 + Math.floor(next() * CANNED_MAX_INPUT_BYTES);
      const input = asciiBody(length);
      const { kind, bytes } = written(input);
      expect(kind, `${length} bytes`).not.toBe("own");
      expect(bytes).toBeLessThanOrEqual(Math.min(length + 5, fixedSize(input)));
      if (length >= 512) expect(kind, `${length} bytes`).toBe("canned");
    }
  });

  it("leaves no state behind: the same input gives the same bytes before and after it, or another dictionary, was used", () => {
    const input = KINDS.ledger!(next, 700);
    const first = deflateRawWithDictionary(input, withSamples);
    const firstPlain = deflateRawWithDictionary(input, plain);
    const again: PreparedDictionary = prepareDictionary(BODY_DICTIONARY_V1, samples);
    deflateRawWithDictionary(
      KINDS.runs!(next, 16000),
      prepareDictionaryCached(DICTIONARIES.large!),
    );
    deflateRawWithDictionary(KINDS.ledger!(next, 900), plain);
    expect(deflateRawWithDictionary(input, withSamples)).toEqual(first);
    expect(deflateRawWithDictionary(input, again)).toEqual(first);
    expect(deflateRawWithDictionary(input, plain)).toEqual(firstPlain);
  });
});

describe("deflateRaw", () => {
  it("writes the header, then a stream zlib inflates, on either side of 16 KiB, with or without a dictionary", () => {
    const text = (length: number) =>
      new TextEncoder().encode(
        MODEL_EVENT.repeat(Math.ceil(length / MODEL_EVENT.length)).slice(0, length),
      );
    for (const length of [MAX_DEFLATE_INPUT_BYTES, MAX_DEFLATE_INPUT_BYTES + 1, 50_000]) {
      const input = text(length);
      const withDictionary = deflateRaw(input, prepareDictionaryCached(BODY_DICTIONARY_V1), 7);
      expect(withDictionary[0]).toBe(7);
      expect(
        inflateRawSync(withDictionary.subarray(1), { dictionary: BODY_DICTIONARY_V1 }).equals(
          input,
        ),
      ).toBe(true);
      const plain = deflateRaw(input, prepareDictionaryCached(new Uint8Array(0)), 1);
      expect(plain[0]).toBe(1);
      expect(inflateRawSync(plain.subarray(1)).equals(input)).toBe(true);
    }
  });
});

const MODEL_EVENT =
  '{"schemaVersion":1,"eventId":"01a226d4-2f2c-7002-aa59-4be6abeb0fcb","sessionId":"01a226d4-2ba0-7000-9bc0-233a1b8610ca","runId":"01a226d4-2ba0-7001-94a3-ca8bfa24d530","seq":1500,"type":"model.requested","stepId":"01a226d4-2f2c-7000-9e47-120a9d48624e","attemptId":"01a226d4-2f2c-7001-bfc6-c73692bafee7","actor":{"type":"agent","id":"bench"},"recordedAt":"2026-11-29T10:22:49.644Z","payload":{"request":{"model":"bench-model","messages":[{"role":"user","content":"What is the weather in Lisbon today?"}],"temperature":0},"requestHash":"cc56f72b8dc5d249bb8c429f336f6202736146611811fbb6703285bf92ea74a3"},"prevHash":"cc56f72b8dc5d249bb8c429f336f6202736146611811fbb6703285bf92ea74a3","hash":"dd56f72b8dc5d249bb8c429f336f6202736146611811fbb6703285bf92ea74a3","commitCursor":1501}';
