import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

/**
 * Each package's `engines.node` is a promise: on the oldest Node it admits, every package it
 * loads at run time (dependencies and peers, as installed here) must admit that Node too, or
 * the user's install warns EBADENGINE and the code may not run.
 */
const root = fileURLToPath(new URL("../", import.meta.url));
type Version = [number, number, number];

function parse(text: string): Version {
  const [major = 0, minor = 0, patch = 0] = text
    .replace(/^v/, "")
    .split(".")
    .map((part) => (/^\d+$/.test(part) ? Number(part) : 0));
  return [major, minor, patch];
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Whether `version` satisfies an engines range of the forms npm packages use here. */
function satisfies(version: Version, range: string): boolean {
  return range.split("||").some((alternative) =>
    alternative
      .trim()
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, "$1")
      .split(/\s+/)
      .every((comparator) => {
        const [, op = "", text = ""] = /^(>=|<=|>|<|\^|~|=)?(.*)$/.exec(comparator) ?? [];
        if (text === "*" || text === "") return true;
        const wanted = parse(text);
        const wildcard = /(^|\.)[xX*]$/.test(text) || text.split(".").length < 3;
        if (op === ">=") return compare(version, wanted) >= 0;
        if (op === ">") return compare(version, wanted) > 0;
        if (op === "<=") return compare(version, wanted) <= 0;
        if (op === "<") return compare(version, wanted) < 0;
        if (op === "^") return version[0] === wanted[0] && compare(version, wanted) >= 0;
        if (op === "~")
          return (
            version[0] === wanted[0] && version[1] === wanted[1] && compare(version, wanted) >= 0
          );
        if (wildcard) return version[0] === wanted[0];
        return compare(version, wanted) === 0;
      }),
  );
}

/**
 * Optional peers that only a test helper subpath loads, never an entry a program runs: a
 * package's tests need them, not its users. Each is held to the oldest Node that helper's doc
 * comment names instead of the package's (`exportedSpans` of `@agent-ledger/core/testing/otel`:
 * Node 20.6.0 or later), so a release of the peer that needs a newer Node still fails here.
 */
const TEST_HELPER_PEERS: Record<string, Record<string, string>> = {
  "@agent-ledger/core": { "@opentelemetry/sdk-trace-base": "20.6.0" },
};

it("each package's oldest Node is one every runtime dependency supports", () => {
  const mismatches: string[] = [];
  for (const name of readdirSync(join(root, "packages"))) {
    const manifest = JSON.parse(
      readFileSync(join(root, "packages", name, "package.json"), "utf8"),
    ) as {
      name: string;
      engines?: { node?: string };
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      peerDependenciesMeta?: Record<string, { optional?: boolean }>;
    };
    const minimum = /^>=\s*(\S+)$/.exec(manifest.engines?.node ?? "")?.[1];
    expect(minimum, `${manifest.name}: engines.node is not ">=x.y.z"`).toBeDefined();
    const packageOldest = parse(minimum as string);
    const runtime = { ...manifest.peerDependencies, ...manifest.dependencies };
    for (const dependency of Object.keys(runtime)) {
      if (dependency.startsWith("@agent-ledger/")) continue;
      const helperMinimum = manifest.peerDependenciesMeta?.[dependency]?.optional
        ? TEST_HELPER_PEERS[manifest.name]?.[dependency]
        : undefined;
      const oldest = helperMinimum !== undefined ? parse(helperMinimum) : packageOldest;
      const installed = JSON.parse(
        readFileSync(join(root, "node_modules", dependency, "package.json"), "utf8"),
      ) as { version: string; engines?: { node?: string } };
      const range = installed.engines?.node;
      if (range !== undefined && !satisfies(oldest, range))
        mismatches.push(
          `${manifest.name} (node ${manifest.engines?.node}) loads ${dependency}@${installed.version} (node ${range})`,
        );
    }
  }
  expect(mismatches).toEqual([]);
});
