import { mulberry32 } from "@agent-ledger/core/testing";
import { describe, expect, it } from "vitest";
import { terminalJson } from "./format.js";
import { CHUNK_CHARS, type OutputStream } from "./io.js";
import { type JsonTextOptions, jsonChunks, writeJson } from "./json-writer.js";

/** A stream that keeps each chunk written; `full` answers false to every write (a full pipe). */
function recorder(options: { full?: boolean } = {}) {
  const chunks: string[] = [];
  let drainListener: (() => void) | undefined;
  const stream: OutputStream = {
    write(chunk) {
      chunks.push(chunk);
      if (!options.full) return true;
      // The pipe empties a moment later.
      setTimeout(() => drainListener?.(), 1);
      return false;
    },
    once(_event, listener) {
      drainListener = listener;
    },
  };
  return { stream, chunks, text: () => chunks.join("") };
}

async function written(value: unknown, options: JsonTextOptions = {}): Promise<string> {
  const { stream, text } = recorder();
  expect(await writeJson(stream, value, options)).toBe(true);
  return text();
}

// Characters JSON.stringify treats apart: quotes, backslashes, C0 controls, DEL and C1
// controls (left raw), bidi controls, lone and paired surrogates, astral characters, keys
// that are integers (JSON.stringify puts them first, in order).
const SPECIAL = [
  '"',
  "\\",
  "/",
  "\n",
  "\r",
  "\t",
  "\b",
  "\f",
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u009b",
  "\u2028",
  "\u2029",
  "\u202e",
  "\u200f",
  "\ud800",
  "\udfff",
  "\ud83d\ude00",
  "é",
  "中",
  "𝄞",
  " ",
];
const NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  1e-7,
  -1e-7,
  123456789012345680000,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  2 ** 53 + 2,
  5e-324,
];

function randomString(next: () => number): string {
  const length = Math.floor(next() * 12);
  let text = "";
  for (let index = 0; index < length; index++) {
    const kind = next();
    if (kind < 0.3) text += SPECIAL[Math.floor(next() * SPECIAL.length)];
    else if (kind < 0.4) text += String.fromCharCode(Math.floor(next() * 0x10000));
    else text += String.fromCharCode(0x20 + Math.floor(next() * 0x5f));
  }
  return text;
}

function randomKey(next: () => number): string {
  const kind = next();
  if (kind < 0.15) return String(Math.floor(next() * 20));
  if (kind < 0.2) return ["", "__proto__x", "toJSON2", "constructor"][Math.floor(next() * 4)] ?? "";
  return randomString(next);
}

/** A value of every kind JSON.stringify meets in a document, to `depth` levels. */
function randomValue(next: () => number, depth: number): unknown {
  const kind = next();
  if (depth <= 0 || kind < 0.35) {
    const leaf = next();
    if (leaf < 0.3) return randomString(next);
    if (leaf < 0.55) return NUMBERS[Math.floor(next() * NUMBERS.length)];
    if (leaf < 0.6) return next() * 1e6 - 5e5;
    if (leaf < 0.7) return next() < 0.5;
    if (leaf < 0.8) return null;
    if (leaf < 0.85) return undefined;
    if (leaf < 0.88) return () => 1;
    if (leaf < 0.9) return Symbol("s");
    if (leaf < 0.93) return new Date(Math.floor(next() * 2e12));
    if (leaf < 0.95) return Object(randomString(next));
    if (leaf < 0.97) return Object(NUMBERS[Math.floor(next() * NUMBERS.length)]);
    return Object(next() < 0.5);
  }
  const size = Math.floor(next() * 5);
  if (kind < 0.6) return Array.from({ length: size }, () => randomValue(next, depth - 1));
  const object: Record<string, unknown> = {};
  for (let index = 0; index < size; index++) object[randomKey(next)] = randomValue(next, depth - 1);
  if (next() < 0.05) return { toJSON: (key: string) => ({ key, inner: object }) };
  return object;
}

describe("writeJson", () => {
  it("writes what JSON.stringify(value, null, 2) writes, for 3,000 varied values, and compact what JSON.stringify(value) writes", async () => {
    const next = mulberry32(0x5eed);
    for (let round = 0; round < 3000; round++) {
      const value = randomValue(next, 1 + Math.floor(next() * 6));
      const expected = JSON.stringify(value, null, 2) ?? "";
      expect(await written(value), `round ${round}`).toBe(expected);
      const compact = JSON.stringify(value) ?? "";
      expect(await written(value, { compact: true }), `round ${round}, compact`).toBe(compact);
    }
  });

  it("matches JSON.stringify on the cases apart", async () => {
    class Point {
      x = 1;
      y = undefined;
      get z() {
        return 3;
      }
    }
    // biome-ignore lint/suspicious/noSparseArray: a hole is one of the cases
    const sparse = [1, , 3];
    const withSymbolKey = { a: 1, [Symbol("hidden")]: 2 };
    const hidden = Object.defineProperty({ shown: 1 }, "hidden", { value: 2, enumerable: false });
    const cases: unknown[] = [
      {},
      [],
      [[]],
      { a: {} },
      { a: [] },
      { a: undefined, b: () => 1, c: Symbol("c") },
      [undefined, () => 1, Symbol("c")],
      sparse,
      { 2: "two", 1: "one", b: "b", a: "a", "-1": "minus", "01": "zero one" },
      { date: new Date(0), nested: { toJSON: () => undefined }, other: 1 },
      { toJSON: (key: string) => `key was ${JSON.stringify(key)}` },
      [{ toJSON: (key: string) => key }, { toJSON: (key: string) => key }],
      { toJSON: () => ({ toJSON: () => "the inner toJSON is not called" }) },
      new Point(),
      withSymbolKey,
      hidden,
      Object.create(null),
      Object.assign(Object.create(null), { a: 1 }),
      [Object(1), Object("s"), Object(false), Object(-0)],
      "just a string",
      42,
      -0,
      null,
      true,
      "\ud800\udc00\ud800 \udc00",
      { "\u0000key\u202e": "\u009b[31m" },
    ];
    for (const value of cases) {
      expect(await written(value)).toBe(JSON.stringify(value, null, 2));
      expect(await written(value, { compact: true })).toBe(JSON.stringify(value));
    }
    // Nothing for what JSON.stringify makes no text of.
    expect(await written(undefined)).toBe("");
    expect(await written(() => 1)).toBe("");
  });

  it("throws as JSON.stringify does on a cycle or a BigInt", async () => {
    const cycle: Record<string, unknown> = { a: [] };
    (cycle.a as unknown[]).push(cycle);
    await expect(written(cycle)).rejects.toThrow(TypeError);
    await expect(written({ big: 1n })).rejects.toThrow(TypeError);
    await expect(written([Object(1n)])).rejects.toThrow(TypeError);
    // The same object twice, not inside itself, is no cycle.
    const shared = { s: 1 };
    expect(await written([shared, { shared }])).toBe(JSON.stringify([shared, { shared }], null, 2));
  });

  it("gathers at most a chunk before each write, a long string in parts of its own, split between surrogate pairs", async () => {
    // Members of about 100 KB: 100 of them, past a chunk many times.
    const document = {
      items: Array.from({ length: 100 }, (_, index) => ({ index, text: "x".repeat(100_000) })),
      // A string past a chunk: each pair of surrogates straddles where a part of a chunk ends.
      long: `${"a".repeat(CHUNK_CHARS - 1)}${"😀".repeat(CHUNK_CHARS)}\ud800 tail`,
      after: true,
    };
    const expected = JSON.stringify(document, null, 2);
    const { stream, chunks, text } = recorder();
    expect(await writeJson(stream, document)).toBe(true);
    expect(text()).toBe(expected);
    expect(expected.length).toBeGreaterThan(5 * CHUNK_CHARS);
    expect(chunks.length).toBeGreaterThan(5);
    // Past a chunk: only the parts of the long string (each about a chunk of its characters).
    const over = chunks.filter((chunk) => chunk.length > CHUNK_CHARS);
    for (const chunk of over) {
      expect(chunk.length).toBeLessThanOrEqual(CHUNK_CHARS + 100);
      expect(chunk).toMatch(/^[^{}[\]]*$/);
    }
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(CHUNK_CHARS + 100);
  });

  it("escapes each string as terminalJson escapes the whole text", async () => {
    const next = mulberry32(0xc1);
    for (let round = 0; round < 500; round++) {
      const value = randomValue(next, 4);
      const expected = terminalJson(JSON.stringify(value, null, 2) ?? "");
      expect(await written(value, { escapeStrings: terminalJson }), `round ${round}`).toBe(
        expected,
      );
    }
    const long = { "k\u009b": `\u202e${"\u0085".repeat(CHUNK_CHARS + 10)}\u200f` };
    expect(await written(long, { escapeStrings: terminalJson })).toBe(
      terminalJson(JSON.stringify(long, null, 2)),
    );
  });

  it("nests deeper than JSON.stringify can: 6,000 levels", async () => {
    // JSON.stringify(value, null, 2) overflows the call stack at about 4,000 levels on Node's
    // default stack (an ATIF trajectory of a chain of 2,000 handoffs). Indented, the text grows
    // with the square of the depth: 6,000 levels are 72 MB.
    let value: unknown = "bottom";
    for (let level = 0; level < 3_000; level++) value = { a: [value] };
    const { stream, chunks } = recorder();
    expect(await writeJson(stream, value)).toBe(true);
    // The text it wrote reads back as the value (JSON.parse does not recurse).
    let read = JSON.parse(chunks.join(""));
    for (let level = 0; level < 3_000; level++) read = read.a[0];
    expect(read).toBe("bottom");
    expect(chunks[0]?.startsWith('{\n  "a": [\n    {\n      "a": [\n')).toBe(true);
  });

  it("compact, makes a chunk at a time a text JSON.stringify cannot: 40,000 levels", async () => {
    // The viewer's answer of a chain of 20,000 child runs: a run and its children, two levels
    // a run. Without indentation the text grows with the depth alone.
    let value: unknown = "bottom";
    for (let level = 0; level < 20_000; level++) value = { a: [value] };
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    const chunks = [...jsonChunks(value, { compact: true })];
    expect(chunks[0]?.startsWith('{"a":[{"a":[')).toBe(true);
    let read = JSON.parse(chunks.join(""));
    for (let level = 0; level < 20_000; level++) read = read.a[0];
    expect(read).toBe("bottom");
  });

  it("waits for the stream to drain before the next chunk", async () => {
    const document = Array.from({ length: 30 }, () => "y".repeat(100_000));
    const { stream, text } = recorder({ full: true });
    expect(await writeJson(stream, document)).toBe(true);
    expect(text()).toBe(JSON.stringify(document, null, 2));
  });

  it("stops before the next chunk once its signal is aborted", async () => {
    const document = Array.from({ length: 50 }, () => "z".repeat(100_000));
    const controller = new AbortController();
    const { stream, chunks } = recorder();
    const write = stream.write.bind(stream);
    stream.write = (chunk) => {
      // Ctrl-C while the first chunk is written.
      controller.abort();
      return write(chunk);
    };
    expect(await writeJson(stream, document, { signal: controller.signal })).toBe(false);
    expect(chunks).toHaveLength(1);
    expect(JSON.stringify(document, null, 2).startsWith(chunks[0] as string)).toBe(true);
    // Aborted before it starts: nothing written.
    const none = recorder();
    expect(await writeJson(none.stream, document, { signal: controller.signal })).toBe(false);
    expect(none.chunks).toEqual([]);
  });
});
