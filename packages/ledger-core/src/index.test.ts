import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import * as core from "./index.js";

const here = dirname(fileURLToPath(import.meta.url));

/** Bare specifiers statically imported by a built entry point and everything it imports. */
function staticImports(entry: string): Set<string> {
  const bare = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    // Static `import ... from "x"` / `export ... from "x"` / `import "x"`; not `import("x")`.
    for (const match of source.matchAll(
      /^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|^\s*import\s+"([^"]+)"/gm,
    )) {
      const specifier = (match[1] ?? match[2]) as string;
      if (specifier.startsWith(".")) visit(resolve(dirname(file), specifier));
      else bare.add(specifier);
    }
  };
  visit(entry);
  return bare;
}

describe("@agent-ledger/core public surface", () => {
  it("exports the contract's names", () => {
    const names = [
      "LedgerError",
      "ConflictError",
      "MemoryEventStore",
      "openStore",
      "SessionRecorder",
      "ReplayCursor",
      "undecidedToolCall",
      "inspectSession",
      "verifyRun",
      "toAtif",
      "toOtelSpans",
      "messageHistory",
      "canonicalJson",
      "uuidv7",
      "resolveEvents",
      "latestEvidence",
      "EVENT_TYPES",
      "MAX_JSON_DEPTH",
      "normalizeError",
      "rebuiltError",
      "redactUrl",
      "shellQuote",
      "REFUSAL_SAVED_TYPE",
    ];
    for (const name of names) expect(core, name).toHaveProperty(name);
    expect(core.EVENT_TYPES).toContain("attempt.approved");
  });

  it("loads no database driver and no OpenTelemetry package", () => {
    const entry = join(here, "..", "dist", "index.js");
    const imported = [...staticImports(entry)].filter((name) => !name.startsWith("node:"));
    for (const name of imported) {
      expect(name).not.toMatch(/^(pg|mysql2|ioredis|better-sqlite3|drizzle-orm|@opentelemetry\/)/);
    }
  });

  it("the store subpaths do import their driver (the check above can fail)", () => {
    const sqlite = staticImports(join(here, "..", "dist", "stores", "sqlite", "index.js"));
    expect([...sqlite]).toContain("better-sqlite3");
  });

  it("the testing subpath, which a store's conformance tests import, loads no OpenTelemetry package; testing/otel loads the SDK", () => {
    const testing = staticImports(join(here, "..", "dist", "testing", "index.js"));
    expect([...testing].filter((name) => name.startsWith("@opentelemetry/"))).toEqual([]);
    const otel = staticImports(join(here, "..", "dist", "testing", "otel", "index.js"));
    expect([...otel]).toContain("@opentelemetry/sdk-trace-base");
  });
});
