import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDirectory } from "../../testing/scratch-directory.js";

/**
 * The shipped migrations are what drizzle-kit generates from the schema files: drizzle-kit,
 * run on a copy of a dialect's folder, finds nothing to add. A schema edited without
 * `npm run db:generate` (or a migration or snapshot edited by hand) fails here instead of at the
 * next generate, which would diff against a stale snapshot.
 */
const packageRoot = fileURLToPath(new URL("../../../", import.meta.url));
const require = createRequire(import.meta.url);
const drizzleKit = join(dirname(require.resolve("drizzle-kit")), "bin.cjs");
/** The node_modules folder drizzle-orm is installed in. */
const modules = dirname(dirname(require.resolve("drizzle-orm")));
const scratch = scratchDirectory("agent-ledger-migrations-", { beforeAll, afterAll });

// An edited schema lives beside drizzle-orm's install, so its imports resolve. Made in
// beforeAll, as `scratch` is: collecting the file's tests (`vitest list`) makes neither.
let editedSchemas = "";
beforeAll(() => {
  editedSchemas = mkdtempSync(join(modules, ".agent-ledger-schema-"));
});
afterAll(() => {
  if (editedSchemas !== "") rmSync(editedSchemas, { recursive: true, force: true });
});

/** One more table per dialect, with its own import (import declarations are hoisted). */
const canary = {
  sqlite: `import { integer as canaryInt, sqliteTable as canaryTable } from "drizzle-orm/sqlite-core";
export const canary = canaryTable("canary", { id: canaryInt("id").primaryKey() });`,
  postgres: `import { integer as canaryInt, pgTable as canaryTable } from "drizzle-orm/pg-core";
export const canary = canaryTable("canary", { id: canaryInt("id").primaryKey() });`,
  mysql: `import { int as canaryInt, mysqlTable as canaryTable } from "drizzle-orm/mysql-core";
export const canary = canaryTable("canary", { id: canaryInt("id").primaryKey() });`,
};

const dialects = [
  { folder: "sqlite", dialect: "sqlite", schema: "src/stores/sqlite/schema.ts" },
  { folder: "postgres", dialect: "postgresql", schema: "src/stores/postgres/schema.ts" },
  { folder: "mysql", dialect: "mysql", schema: "src/stores/mysql/schema.ts" },
] as const;

/** Runs `drizzle-kit generate` into `out`; returns the SQL files it holds afterwards. */
function generate(schema: string, dialect: string, out: string): string[] {
  // drizzle-kit reads `--out` relative to the working directory (it prefixes "./").
  execFileSync(
    process.execPath,
    [
      drizzleKit,
      "generate",
      "--dialect",
      dialect,
      "--schema",
      schema,
      "--out",
      relative(packageRoot, out),
    ],
    // drizzle-kit loads the schema through tsx, whose transpile cache would stay behind in
    // the system's temp folder (tsx-<uid>) after every run.
    { cwd: packageRoot, stdio: "pipe", env: { ...process.env, TSX_DISABLE_CACHE: "1" } },
  );
  return readdirSync(out).filter((name) => name.endsWith(".sql"));
}

function copyOf(folder: string, name: string): string {
  const out = join(scratch, name);
  cpSync(join(packageRoot, "drizzle", folder), out, { recursive: true });
  return out;
}

describe("shipped migrations", () => {
  for (const { folder, dialect, schema } of dialects) {
    it(`${folder}: drizzle-kit finds nothing to add to drizzle/${folder}`, () => {
      const shipped = readdirSync(join(packageRoot, "drizzle", folder)).filter((name) =>
        name.endsWith(".sql"),
      );
      expect(generate(schema, dialect, copyOf(folder, `${folder}-same`))).toEqual(shipped);
    });

    it(`${folder}: a table added to the schema makes drizzle-kit generate one (the check can fail)`, () => {
      const edited = join(editedSchemas, `${folder}.ts`);
      writeFileSync(
        edited,
        `${readFileSync(join(packageRoot, schema), "utf8")}\n${canary[folder]}\n`,
      );
      const out = copyOf(folder, `${folder}-edited`);
      const before = readdirSync(out).filter((name) => name.endsWith(".sql"));
      const added = generate(relative(packageRoot, edited), dialect, out).filter(
        (name) => !before.includes(name),
      );
      expect(added).toHaveLength(1);
      expect(readFileSync(join(out, added[0] as string), "utf8")).toContain("canary");
    });
  }
});
