import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../events/json.js";
import { words } from "./compact.test.data.js";

describe("fast paths keep their results", () => {
  it("CanonicalJsonMemo writes exactly canonicalJson, memoized or not", async () => {
    const { canonicalJson } = await import("../events/canonical.js");
    const { CanonicalJsonMemo } = await import("./canonical-memo.js");
    const memo = new CanonicalJsonMemo();
    const long = `quote " slash \\ newline \n emoji 😀 ${words(3, 600)}`;
    const value = {
      z: [1, -0, 1.5e300, true, null, long, { "b c": long, a: "\u2028" }],
      "\u00e9": { long, short: "x" },
      a: long,
    } as unknown as JsonValue;
    expect(memo.json(value)).toBe(canonicalJson(value));
    expect(memo.json(value)).toBe(canonicalJson(value));
  });

  it("grouped `prefix.**.key` redaction removes every listed key and copies nothing else", async () => {
    const { applyRedaction, DEFAULT_CREDENTIAL_PATHS } = await import("../recorder/redact.js");
    const payload = {
      request: {
        headers: { authorization: "a", other: "keep" },
        providerOptions: { openai: { apiKey: "k", nested: [{ token: "t", ok: 1 }] } },
        messages: [{ role: "user", content: "hi", password: "p" }],
      },
      token: "outside the request stays",
    } as JsonValue;
    const grouped = applyRedaction(
      payload,
      [...DEFAULT_CREDENTIAL_PATHS, "request.headers.other"],
      {
        type: "model.requested",
      },
    );
    expect(grouped).toEqual({
      request: {
        headers: { authorization: "[redacted]", other: "[redacted]" },
        providerOptions: {
          openai: { apiKey: "[redacted]", nested: [{ token: "[redacted]", ok: 1 }] },
        },
        messages: [{ role: "user", content: "hi", password: "[redacted]" }],
      },
      token: "outside the request stays",
    });
    expect(JSON.stringify(grouped)).not.toMatch(/"(a|k|t|p)"/);
    expect((grouped as JsonObject).token).toBe("outside the request stays");
    // Nothing to redact: the very same object comes back (no copy of a long history).
    const clean = { request: { messages: [{ role: "user", content: "hi" }] } };
    expect(applyRedaction(clean, [...DEFAULT_CREDENTIAL_PATHS], { type: "x" })).toBe(clean);
  });

  it("a list of paths edited between two calls is applied as it is at each call", async () => {
    // The paths are planned once per list (every model call runs them), and a caller may edit
    // its list afterwards: the plan of the old list must not be used for the new one.
    const { applyRedaction } = await import("../recorder/redact.js");
    const payload = { request: { apiKey: "k", token: "t", headers: { secret: "s" } } };
    const paths = ["request.**.apiKey"];
    const context = { type: "model.requested" };
    expect(applyRedaction(payload, paths, context)).toEqual({
      request: { apiKey: "[redacted]", token: "t", headers: { secret: "s" } },
    });
    paths.push("request.headers.secret");
    expect(applyRedaction(payload, paths, context)).toEqual({
      request: { apiKey: "[redacted]", token: "t", headers: { secret: "[redacted]" } },
    });
    paths[0] = "request.**.token";
    expect(applyRedaction(payload, paths, context)).toEqual({
      request: { apiKey: "k", token: "[redacted]", headers: { secret: "[redacted]" } },
    });
    paths.length = 0;
    expect(applyRedaction(payload, paths, context)).toBe(payload);
  });
});
