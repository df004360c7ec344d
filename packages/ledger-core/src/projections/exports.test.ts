import { describe, expect, it } from "vitest";
import * as core from "../index.js";

describe("projection exports", () => {
  it("pins the projection names in the public surface", () => {
    const names = ["messageHistory", "toAtif", "toOtelSpans"];
    for (const name of names)
      expect(typeof (core as Record<string, unknown>)[name]).toBe("function");
  });

  it("loads no OpenTelemetry package when core is imported", async () => {
    const { execFileSync } = await import("node:child_process");
    const { fileURLToPath } = await import("node:url");
    const entry = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
    const script = `await import(${JSON.stringify(entry)}); const { createRequire } = await import("node:module"); const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes("@opentelemetry")); process.stdout.write(JSON.stringify(loaded));`;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(JSON.parse(output)).toEqual([]);
  });
});
