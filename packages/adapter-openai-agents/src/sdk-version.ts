import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { LedgerError } from "@agent-ledger/core";

let cached: string | undefined;

/**
 * The version of the installed `@openai/agents` package. A serialized RunState is tied to it in
 * both directions (PITFALLS: 0.14.3 and 0.20 reject each other's), so every checkpoint records it.
 * The package does not export its package.json, so we walk up from its resolved entry point.
 */
export function openAiAgentsVersion(): string {
  if (cached !== undefined) return cached;
  const require = createRequire(import.meta.url);
  let directory = dirname(require.resolve("@openai/agents"));
  for (let depth = 0; depth < 6; depth++) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "@openai/agents" && typeof manifest.version === "string") {
        cached = manifest.version;
        return cached;
      }
    } catch {
      // no package.json at this level: keep walking up
    }
    directory = dirname(directory);
  }
  throw new LedgerError("not-found", "cannot find the installed @openai/agents package.json");
}
