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

/** The first TypeScript example of each package README, and the README's text after it. */
const packageReadmes = readdirSync(join(root, "packages")).map((name) => {
  const text = readFileSync(join(root, "packages", name, "README.md"), "utf8");
  const match = /```ts\n([\s\S]*?)```/.exec(text);
  return {
    name,
    example: match?.[1] ?? "",
    after:
      text
        .slice((match?.index ?? 0) + (match?.[0].length ?? 0))
        .trimStart()
        .split("\n\n")[0] ?? "",
  };
});

it("package READMEs: the first example imports each agent-ledger function it calls", async () => {
  const exported = new Map<string, string>();
  for (const name of readdirSync(join(root, "packages"))) {
    const { name: packageName } = JSON.parse(
      readFileSync(join(root, "packages", name, "package.json"), "utf8"),
    ) as { name: string };
    const module = (await import(join(root, "packages", name, "dist", "index.js"))) as object;
    for (const key of Object.keys(module)) if (!exported.has(key)) exported.set(key, packageName);
  }
  const missing: string[] = [];
  for (const { name, example, after } of packageReadmes) {
    expect(example, `${name}/README.md has no TypeScript example`).not.toBe("");
    // Imports written in the example, or in the sentence right after it ("with `import ...`").
    const imported = new Set(
      [...`${example}\n${after}`.matchAll(/import \{([^}]*)\} from/g)].flatMap(([, names]) =>
        (names as string).split(",").map((part) => part.trim().split(/\s+as\s+/)[0] as string),
      ),
    );
    const used = new Set(
      [...example.matchAll(/\b(?:new\s+)?([A-Za-z_$][\w$]*)\s*\(/g)].map(([, id]) => id as string),
    );
    for (const id of used)
      if (exported.has(id) && !imported.has(id))
        missing.push(
          `${name}/README.md uses ${id} (from ${exported.get(id)}) without importing it`,
        );
  }
  expect(missing).toEqual([]);
});
