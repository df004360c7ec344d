import { describe, expect, it } from "vitest";
import * as core from "../index.js";

describe("projection exports", () => {
  it("pins the projection names in the public surface", () => {
    const names = ["messageHistory", "toAtif", "toOtelSpans", "LedgerIdGenerator"];
    for (const name of names)
      expect(typeof (core as Record<string, unknown>)[name]).toBe("function");
  });
  // That importing core loads no OpenTelemetry package is checked in src/index.test.ts.
});
