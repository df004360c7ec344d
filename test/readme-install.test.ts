import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

/**
 * A user outside this repository follows the README: whatever its quick start imports, the
 * driver of the store URL it opens, and the package behind every `npx <command>` it shows
 * must be in an `npm install` line of the README. `npx agent-ledger` without
 * `@agent-ledger/cli` installed asks the registry for a package named `agent-ledger`, which
 * is not ours.
 */
const root = fileURLToPath(new URL("../", import.meta.url));
const readme = readFileSync(join(root, "README.md"), "utf8");
const bins = new Map<string, string>();
for (const name of readdirSync(join(root, "packages"))) {
  const manifest = JSON.parse(
    readFileSync(join(root, "packages", name, "package.json"), "utf8"),
  ) as { name: string; bin?: Record<string, string> };
  for (const bin of Object.keys(manifest.bin ?? {})) bins.set(bin, manifest.name);
}
/** The driver `openStore` loads for each URL scheme (core's optional peers). */
const drivers: Record<string, string> = {
  sqlite: "better-sqlite3",
  postgres: "pg",
  mysql: "mysql2",
  redis: "ioredis",
};

it("README: an npm install line installs what the quick start and the commands use", () => {
  const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const imported = [...quickStart.matchAll(/from "((?:@[^/"]+\/)?[^/"]+)[^"]*"/g)].map(
    ([, name]) => name as string,
  );
  const opened = [...quickStart.matchAll(/openStore\("(\w+):/g)].flatMap(([, scheme]) =>
    drivers[scheme as string] ? [drivers[scheme as string] as string] : [],
  );
  const commands = [...readme.matchAll(/^npx ([\w-]+)/gm)].map(([, bin]) => {
    const owner = bins.get(bin as string);
    expect(owner, `npx ${bin}: no package of this repository has that bin`).toBeDefined();
    return owner as string;
  });
  const needed = new Set([...imported, ...opened, ...commands]);
  expect(imported).toContain("@agent-ledger/core");

  const installed = new Set(
    [...readme.matchAll(/^npm (?:install|i|add)\b(.*)$/gm)].flatMap(([, args]) =>
      (args as string)
        .replace(/#.*$/, "")
        .split(/\s+/)
        .filter((arg) => arg !== "" && !arg.startsWith("-")),
    ),
  );
  expect([...needed].filter((name) => !installed.has(name))).toEqual([]);
});
