import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * What `npm publish` would ship of each workspace package (`npm pack --dry-run`, nothing
 * written, no registry asked), checked against what a user's install will import: every
 * `exports` and `bin` target is in the tarball, every relative import of a shipped module
 * resolves to a shipped file, every folder a module reads next to itself
 * (`new URL("../dir/", import.meta.url)`) ships with files in it, and no test or build-cache
 * file goes out. Run after `tsc -b` (npm test builds first): the tarball is built from dist.
 */
const root = fileURLToPath(new URL("../", import.meta.url));
const packages = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name));

function packedFiles(directory: string): Set<string> {
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  const out = execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: directory,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const [pack] = JSON.parse(out) as { files: { path: string }[] }[];
  return new Set((pack?.files ?? []).map((file) => file.path));
}

/** Every string in an `exports` value (conditions nest). */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(targets);
}

/** The files a shipped source map points to, relative to the package. */
function sourcesOf(directory: string, map: string): string[] {
  const { sources = [], sourceRoot = "" } = JSON.parse(
    readFileSync(join(directory, map), "utf8"),
  ) as { sources?: string[]; sourceRoot?: string };
  return sources.map((source) => posix.join(posix.dirname(map), sourceRoot, source));
}

const relativeImport = /(?:\bfrom\s*|\bimport\s*\(\s*)["'](\.{1,2}\/[^"']+)["']/g;
const testing = /(^|\/)testing\//;
const besideModule = /new URL\(\s*[`"'](\.{1,2}\/[^`"'$]*)/g;

for (const directory of packages) {
  const manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as {
    name: string;
    license?: string;
    exports?: unknown;
    bin?: string | Record<string, string>;
  };
  describe(`${manifest.name}: the published files`, () => {
    const files = packedFiles(directory);
    const shipped = (path: string) => files.has(posix.normalize(path).replace(/^\.\//, ""));

    it("hold every exports and bin target", () => {
      const bins =
        typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
      const wanted = [...targets(manifest.exports), ...bins];
      expect(wanted.length).toBeGreaterThan(0);
      expect(wanted.filter((path) => !shipped(path))).toEqual([]);
    });

    it("hold every module a shipped module imports, and every folder it reads", () => {
      const missing: string[] = [];
      let imports = 0;
      for (const file of files) {
        if (!file.endsWith(".js")) continue;
        // Doc comments hold example imports (`from "./my-store.js"`): code only.
        const source = readFileSync(join(directory, file), "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/^\s*\/\/.*$/gm, "");
        for (const [, specifier] of source.matchAll(relativeImport)) {
          imports++;
          const target = posix.join(posix.dirname(file), specifier as string);
          if (!shipped(target)) missing.push(`${file} imports ${specifier}`);
        }
        for (const [, specifier] of source.matchAll(besideModule)) {
          const target = posix.join(posix.dirname(file), specifier as string);
          const found = specifier?.endsWith("/")
            ? [...files].some((path) => path.startsWith(target))
            : shipped(target);
          if (!found) missing.push(`${file} reads ${specifier}`);
        }
      }
      expect(imports).toBeGreaterThan(0);
      expect(missing).toEqual([]);
    });

    it("hold the text of the licence they declare", () => {
      // MIT asks that its text go with every copy; the manifest's "license" field names it only.
      expect(manifest.license).toBe("MIT");
      expect(files.has("LICENSE")).toBe(true);
      expect(readFileSync(join(directory, "LICENSE"), "utf8")).toBe(
        readFileSync(join(root, "LICENSE"), "utf8"),
      );
    });

    it("declare each bin target as npm publishes it", () => {
      // npm publish rewrites "./dist/bin.js" to "dist/bin.js" and warns that the script name
      // "was invalid and removed", which reads as if the command had been dropped.
      const bins =
        typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
      expect(bins.filter((path) => path !== posix.normalize(path).replace(/^(\.\/)+/, ""))).toEqual(
        [],
      );
    });

    it("hold the source file every shipped source map points to", () => {
      // A map to a missing file breaks stack traces (`--enable-source-maps`), bundlers'
      // source-map loaders, and an editor's "go to definition" (declaration maps).
      const missing: string[] = [];
      let maps = 0;
      for (const file of files) {
        if (!file.endsWith(".map")) continue;
        maps++;
        for (const source of sourcesOf(directory, file))
          if (!shipped(source)) missing.push(`${file} -> ${source}`);
      }
      expect(maps).toBeGreaterThan(0);
      expect(missing).toEqual([]);
    });

    it("hold no test, test helper or build cache", () => {
      // Test helpers ship only inside an exported testing kit (`@agent-ledger/core/testing`),
      // with the sources its maps point to.
      const kits = targets(manifest.exports)
        .filter((target) => testing.test(target))
        .flatMap((target) => {
          const entry = posix.normalize(target);
          const map = `${entry}.map`;
          const sources = files.has(map) ? sourcesOf(directory, map) : [];
          return [entry, ...sources].map((path) => `${posix.dirname(path)}/`);
        });
      const stray = [...files].filter(
        (path) =>
          /\.test\.|\.tsbuildinfo$/.test(path) ||
          (testing.test(path) && !kits.some((kit) => path.startsWith(kit))),
      );
      expect(stray).toEqual([]);
    });
  });
}
