import { describe, expect, it } from "vitest";
import { inspectSession } from "../inspect/inspect-session.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { LedgerError } from "./errors.js";
import {
  assertPlainJson,
  childPath,
  cloneJson,
  type JsonValue,
  MAX_JSON_DEPTH,
  normalizeError,
  toPlainJson,
} from "./json.js";

function rejection(value: unknown, path = "$"): { code: string; path: string | undefined } {
  try {
    toPlainJson(value, path);
  } catch (error) {
    if (!LedgerError.isInstance(error)) throw error;
    return { code: error.code, path: error.path };
  }
  throw new Error("toPlainJson accepted the value");
}

class Point {
  x = 1;
}

describe("toPlainJson", () => {
  it("rejects every non-JSON class of §6 with the path of the first bad value", () => {
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    const cases: Array<[unknown, string]> = [
      [undefined, ""],
      [() => 1, ""],
      [Symbol("s"), ""],
      [1n, ""],
      [Number.NaN, ""],
      [Number.POSITIVE_INFINITY, ""],
      [Number.NEGATIVE_INFINITY, ""],
      [-0, ""],
      [sparse, "[1]"],
      [cycle, ".self"],
      [new Date(0), ""],
      [new Map(), ""],
      [new Set(), ""],
      [new Point(), ""],
      [new Number(1), ""],
      [new Uint8Array(1), ""],
      [new Error("x"), ""],
      [Promise.resolve(1), ""],
      [{ [Symbol("k")]: 1 }, ""],
      ["\ud800", ""],
      ["a\udc00", ""],
      ["\udc00\ud800", ""],
    ];
    for (const [value, suffix] of cases) {
      const payload = { messages: [{}, {}, {}, { content: value }] };
      expect(rejection(payload, "$.events[0].payload"), String(suffix)).toEqual({
        code: "non-serializable",
        path: `$.events[0].payload.messages[3].content${suffix}`,
      });
    }
    expect(rejection({ "\ud800": 1 }).path).toBe('$["\\ud800"]');
    expect(rejection({ "a b": [1, { "x-y": undefined }] }).path).toBe('$["a b"][1]["x-y"]');
  });

  it("names the first bad value in document order", () => {
    expect(rejection({ a: [1, 2, Number.NaN], b: undefined }).path).toBe("$.a[2]");
    expect(rejection([[], [0, [null, () => 1]]]).path).toBe("$[1][1][1]");
  });

  it("accepts plain JSON, including a shared (non-cyclic) object and a null prototype", () => {
    const shared = { s: 1 };
    const bare = Object.assign(Object.create(null) as object, { k: "v" });
    const value = { a: shared, b: shared, c: bare, d: [0, -1, 1.5, 1e21, "", null, true] };
    const copy = toPlainJson(value) as Record<string, JsonValue>;
    expect(copy).toEqual({
      a: { s: 1 },
      b: { s: 1 },
      c: { k: "v" },
      d: [0, -1, 1.5, 1e21, "", null, true],
    });
    expect(Object.getPrototypeOf(copy.c)).toBe(Object.prototype);
  });

  it("accepts nesting down to MAX_JSON_DEPTH and names the first value below it", () => {
    const nested = (depth: number): JsonValue => {
      let value: JsonValue = "leaf";
      for (let level = 0; level < depth; level++) value = { a: value };
      return value;
    };
    expect(() => toPlainJson(nested(MAX_JSON_DEPTH))).not.toThrow();
    let caught: unknown;
    try {
      toPlainJson(nested(5_000), "$.payload");
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({
      code: "non-serializable",
      path: `$.payload${".a".repeat(MAX_JSON_DEPTH)}`,
      message: expect.stringContaining(`nested deeper than ${MAX_JSON_DEPTH} levels`),
    });
  });

  it("returns a deep copy the caller cannot change", () => {
    const value = { list: [{ n: 1 }], nested: { deep: { x: "y" } } };
    const copy = toPlainJson(value) as typeof value;
    value.list[0]!.n = 2;
    value.nested.deep.x = "z";
    value.list.push({ n: 3 });
    expect(copy).toEqual({ list: [{ n: 1 }], nested: { deep: { x: "y" } } });
  });

  it("keeps __proto__ as an own data key, never a prototype change", () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as JsonValue;
    const copy = toPlainJson(value) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const clone = cloneJson(copy as JsonValue) as Record<string, unknown>;
    expect(Object.keys(clone)).toEqual(["__proto__", "a"]);
    expect(Object.getPrototypeOf(clone)).toBe(Object.prototype);
    expect(JSON.stringify(clone)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it("assertPlainJson validates without copying", () => {
    expect(() => assertPlainJson({ a: [1, "x"] })).not.toThrow();
    expect(() => assertPlainJson({ a: new Date() }, "$.p")).toThrow(
      expect.objectContaining({ path: "$.p.a" }),
    );
  });
});

describe("childPath", () => {
  it("uses dots for identifiers and brackets otherwise", () => {
    expect(childPath("$", "a")).toBe("$.a");
    expect(childPath("$", "_a$1")).toBe("$._a$1");
    expect(childPath("$", 3)).toBe("$[3]");
    expect(childPath("$", "1a")).toBe('$["1a"]');
    expect(childPath("$", "")).toBe('$[""]');
    expect(childPath("$", 'q"uote')).toBe('$["q\\"uote"]');
  });
});

describe("cloneJson", () => {
  it("deep copies", () => {
    const value = { a: [1, { b: "c" }] };
    const copy = cloneJson(value as JsonValue) as typeof value;
    expect(copy).toEqual(value);
    (value.a[1] as { b: string }).b = "changed";
    expect((copy.a[1] as { b: string }).b).toBe("c");
    expect(cloneJson(null)).toBeNull();
    expect(cloneJson(undefined)).toBeUndefined();
  });
});

describe("normalizeError", () => {
  it("makes texts with a lone surrogate well formed, so the failure can be recorded", async () => {
    const cut = "ok \u{1F600}".slice(0, 4); // "ok " and half of the emoji
    const error = Object.assign(new Error(`bad JSON near: ${cut}`), {
      cause: `${cut} (thrown as a string)`,
    });
    const out = normalizeError(error);
    expect(out.message).toBe("bad JSON near: ok \uFFFD");
    expect(out.cause).toEqual({ name: "NonError", message: "ok \uFFFD (thrown as a string)" });
    expect(out.stack).not.toMatch(/[\uD800-\uDFFF]/);
    // Through a recorder: the failed call is resolved and the run closes.
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c", name: "parse", args: {} });
    await recorder.toolFailed(call, error);
    await recorder.failRun(error);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("failed");
  });

  it("keeps name, message, code, stack and a cause chain", () => {
    const root = Object.assign(new Error("socket closed"), { code: "ECONNRESET" });
    const error = new TypeError("request failed", { cause: root });
    const out = normalizeError(error);
    expect(out).toMatchObject({
      name: "TypeError",
      message: "request failed",
      cause: { name: "Error", message: "socket closed", code: "ECONNRESET" },
    });
    expect(out.stack).toContain("request failed");
    expect(() => toPlainJson(out)).not.toThrow();
    expect(normalizeError(error, { stack: false })).toEqual({
      name: "TypeError",
      message: "request failed",
      cause: { name: "Error", message: "socket closed", code: "ECONNRESET" },
    });
  });

  it("keeps a numeric code and an HTTP status (status or statusCode), and nothing that is not one", () => {
    // { code: 429 } and a provider's statusCode: 429 were recorded as { name, message } alone.
    const limited = Object.assign(new Error("rate limited"), { code: 429, statusCode: 429 });
    expect(normalizeError(limited, { stack: false })).toEqual({
      name: "Error",
      message: "rate limited",
      code: 429,
      status: 429,
    });
    const http = Object.assign(new Error("unavailable"), { status: 503, code: "E503" });
    expect(normalizeError(new Error("call failed", { cause: http }), { stack: false })).toEqual({
      name: "Error",
      message: "call failed",
      cause: { name: "Error", message: "unavailable", code: "E503", status: 503 },
    });
    const odd = Object.assign(new Error("odd"), {
      code: Number.NaN,
      status: "429",
      statusCode: 1.5,
    });
    expect(normalizeError(odd, { stack: false })).toEqual({ name: "Error", message: "odd" });
  });

  it("normalises LedgerErrors, error-like objects and thrown non-errors", () => {
    const ledger = new LedgerError("conflict", "moved on");
    expect(normalizeError(ledger, { stack: false })).toEqual({
      name: "LedgerError",
      message: "moved on",
      code: "conflict",
    });
    expect(normalizeError({ name: "Custom", message: 42 }, { stack: false })).toEqual({
      name: "Custom",
      message: "42",
    });
    expect(normalizeError("plain string")).toEqual({ name: "NonError", message: "plain string" });
    expect(normalizeError({ a: 1 })).toEqual({ name: "NonError", message: '{"a":1}' });
    expect(normalizeError(undefined)).toEqual({ name: "NonError", message: "undefined" });
    expect(normalizeError(null)).toEqual({ name: "NonError", message: "null" });
    expect(normalizeError(10n)).toEqual({ name: "NonError", message: "10" });
    expect(normalizeError(Symbol("s"))).toEqual({ name: "NonError", message: "Symbol(s)" });
  });

  it("is total: an error whose fields throw when read, or have no text form, is still recorded", () => {
    const lazy = new Error("x");
    Object.defineProperty(lazy, "message", {
      get() {
        throw new Error("getter boom");
      },
    });
    expect(normalizeError(lazy, { stack: false })).toEqual({
      name: "Error",
      message: "[unreadable: Error: getter boom]",
    });
    const body = { name: "ProviderError", message: Object.create(null) };
    expect(normalizeError(body, { stack: false })).toEqual({
      name: "ProviderError",
      message: "[object Object]",
    });
    const { proxy, revoke } = Proxy.revocable(new Error("gone"), {});
    revoke();
    expect(normalizeError(proxy)).toEqual({
      name: "NonError",
      message: expect.stringMatching(/^\[unreadable: TypeError: .*revoked/),
    });
    const unreadableCause = new Error("outer", {
      cause: new Proxy(
        {},
        {
          has() {
            throw new Error("trap");
          },
        },
      ),
    });
    expect(normalizeError(unreadableCause, { stack: false }).cause).toEqual({
      name: "NonError",
      message: "[unreadable: Error: trap]",
    });
  });

  it("survives cycles: a self-caused error and a cyclic thrown object", () => {
    const error = new Error("loop");
    (error as { cause?: unknown }).cause = error;
    const out = normalizeError(error, { stack: false });
    let depth = 0;
    for (let node = out; node.cause; node = node.cause) depth++;
    expect(depth).toBeLessThanOrEqual(4);
    expect(() => toPlainJson(out)).not.toThrow();
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(normalizeError(cyclic)).toEqual({ name: "NonError", message: "[object Object]" });
    const bare: Record<string, unknown> = Object.create(null);
    bare.self = bare;
    expect(normalizeError(bare)).toEqual({ name: "NonError", message: "[object Object]" });
  });
});
