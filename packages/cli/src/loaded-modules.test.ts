import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordDemoSession, runBin } from "./session-fixture.test.data.js";

// Every `agent-ledger` command is a new process, and what it imports is most of its start-up
// time: a command loads the packages its work needs and no others (a store's driver and ORM
// only for that store, OpenTelemetry's SDK only for `export --format otlp-json`).
const OPTIONAL = [
  "drizzle-orm",
  "better-sqlite3",
  "pg",
  "mysql2",
  "ioredis",
  "@opentelemetry/sdk-trace-base",
] as const;

describe("the packages an agent-ledger command loads", () => {
  const directory = scratchDirectory("agent-ledger-modules-", { beforeAll, afterAll });
  const storeUrl = `sqlite:${join(directory, "l.db")}`;
  const preload = join(directory, "record-loads.mjs");
  let runs = 0;

  beforeAll(async () => {
    // A module-loading hook that writes down each module's URL as Node loads it.
    writeFileSync(
      join(directory, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";
export async function load(url, context, next) {
  appendFileSync(process.env.LOADED_MODULES_LOG, url + "\\n");
  return next(url, context);
}
`,
    );
    writeFileSync(
      preload,
      `import { register } from "node:module";
register("./hooks.mjs", import.meta.url);
`,
    );
    const store = await openStore(storeUrl);
    await recordDemoSession(store, "demo");
    await store.close();
  });

  /** Runs the command and answers the packages (by name) it loaded from node_modules. */
  async function packagesLoaded(args: string[], exitCode = 0): Promise<Set<string>> {
    const log = join(directory, `loaded-${runs++}.txt`);
    writeFileSync(log, "");
    const result = await runBin(args, {
      LOADED_MODULES_LOG: log,
      NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
      AGENT_LEDGER_CONNECT_TIMEOUT_MS: "3000",
    });
    if (exitCode === 0) expect(result.stderr).toBe("");
    expect(result.code, result.stderr).toBe(exitCode);
    const urls = readFileSync(log, "utf8").split("\n").filter(Boolean);
    // The hook saw the command itself load.
    expect(urls.some((url) => url.endsWith("/cli/dist/run-cli.js"))).toBe(true);
    const names = new Set<string>();
    for (const url of urls) {
      const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
      if (match) names.add(match[1] as string);
    }
    return names;
  }

  function optionalIn(names: Set<string>): string[] {
    return OPTIONAL.filter((name) => names.has(name));
  }

  it("--help loads no store driver, ORM or OpenTelemetry", async () => {
    expect(optionalIn(await packagesLoaded(["--help"]))).toEqual([]);
  });

  it("a command on a store other than SQLite loads its driver only, no SQLite driver or ORM", async () => {
    // No server on port 9: the store is opened (its driver loaded), then unreachable (exit 4).
    const args = ["--store", "redis://127.0.0.1:9/0", "sessions"];
    expect(optionalIn(await packagesLoaded(args, 4))).toEqual(["ioredis"]);
  });

  it("inspect and export on SQLite load its driver and drizzle, not OpenTelemetry", async () => {
    for (const args of [
      ["inspect", "demo"],
      ["export", "demo", "--format", "jsonl"],
      ["export", "demo", "--format", "atif"],
    ])
      expect(optionalIn(await packagesLoaded(["--store", storeUrl, ...args]))).toEqual([
        "drizzle-orm",
        "better-sqlite3",
      ]);
  });

  it("export --format otlp-json loads OpenTelemetry's SDK, which makes its spans", async () => {
    const names = await packagesLoaded([
      "--store",
      storeUrl,
      "export",
      "demo",
      "--format",
      "otlp-json",
    ]);
    expect(names.has("@opentelemetry/sdk-trace-base")).toBe(true);
  });
});
