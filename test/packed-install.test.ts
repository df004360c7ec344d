import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The packages as a user outside this repository gets them: each workspace package is packed
 * (`npm pack`) and unpacked into a fresh project's node_modules, next to links to the
 * third-party packages it declares (dependencies and peers, never devDependencies or whatever
 * the monorepo root happens to hoist). Offline: the third-party packages come from this
 * repository's node_modules. Run after `tsc -b` (npm test builds first).
 */
const root = fileURLToPath(new URL("../", import.meta.url));
const packageDirs = readdirSync(join(root, "packages")).map((name) => join(root, "packages", name));

interface Manifest {
  name: string;
  exports?: Record<string, unknown>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const manifests = packageDirs.map(
  (directory) =>
    [
      directory,
      JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as Manifest,
    ] as const,
);
const ours = new Set(manifests.map(([, manifest]) => manifest.name));
/** What a TypeScript user of each optional driver installs with it. */
const driverTypes = ["@types/better-sqlite3", "@types/pg"];

let app: string;
const node_modules = () => join(app, "node_modules");

function link(name: string, from: string): void {
  const target = join(node_modules(), name);
  if (existsSync(target)) return;
  const source = [join(from, "node_modules", name), join(root, "node_modules", name)].find((path) =>
    existsSync(path),
  );
  if (source === undefined) throw new Error(`${name} is not installed in this repository`);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(source, target, "junction");
}

/** Links the third-party packages `packages` declare; optional peers only if asked. */
function linkDeclared(packages: string[], options: { optionalPeers: boolean }): void {
  for (const [directory, manifest] of manifests) {
    if (!packages.includes(manifest.name)) continue;
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter(
      (name) => options.optionalPeers || !manifest.peerDependenciesMeta?.[name]?.optional,
    );
    for (const name of [...Object.keys(manifest.dependencies ?? {}), ...peers])
      if (!ours.has(name)) link(name, directory);
  }
}

function run(command: string, args: string[]): { status: number | null; output: string } {
  const result = spawnSync(command, args, { cwd: app, encoding: "utf8", timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** Runs an ES module in the fresh project. */
const runModule = (source: string) => run(process.execPath, ["--input-type=module", "-e", source]);

/**
 * A user's strict tsc, checking every .d.ts it reads (ours, @types/node, the drivers') except
 * TypeScript's own lib.*.d.ts: checking those again in each of the five runs was a fifth to
 * half of this file's time, and says nothing about the packages.
 */
const STRICT = [
  "--strict",
  "--skipLibCheck",
  "false",
  "--skipDefaultLibCheck",
  "--target",
  "es2022",
];

/** Type-checks `source` as the fresh project's own strict code, library .d.ts files included. */
function typecheck(source: string, resolution: "node16" | "nodenext" | "bundler") {
  const file = join(app, `consumer-${resolution}.ts`);
  writeFileSync(file, source);
  const module = resolution === "bundler" ? "esnext" : resolution;
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  return run(process.execPath, [
    ...[tsc, "--noEmit", ...STRICT],
    ...["--module", module, "--moduleResolution", resolution, "--types", "node", file],
  ]);
}

/** Every documented subpath of every package: `@agent-ledger/core/sqlite`... */
const subpaths = manifests.flatMap(([, manifest]) =>
  Object.keys(manifest.exports ?? {})
    .filter((key) => key !== "./package.json")
    .map((key) => (key === "." ? manifest.name : `${manifest.name}/${key.slice(2)}`)),
);

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), "agent-ledger-install-"));
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" }),
  );
  const tarballs = join(app, "tarballs");
  mkdirSync(tarballs);
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  for (const [directory, manifest] of manifests) {
    const out = execFileSync(
      npm,
      ["pack", "--json", "--ignore-scripts", "--pack-destination", tarballs],
      { cwd: directory, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    const [{ filename }] = JSON.parse(out) as [{ filename: string }];
    const target = join(node_modules(), manifest.name);
    mkdirSync(target, { recursive: true });
    execFileSync("tar", ["-xzf", join(tarballs, filename), "-C", target, "--strip-components=1"]);
  }
  link("@types/node", root);
  // A user of @agent-ledger/core alone (the CLI depends on every driver).
  linkDeclared(["@agent-ledger/core"], { optionalPeers: false });
}, 60_000);

afterAll(() => {
  if (app) rmSync(app, { recursive: true, force: true });
});

describe("an install without the optional drivers", () => {
  it("imports @agent-ledger/core without loading a driver or OpenTelemetry", () => {
    const { status, output } = runModule(
      'const core = await import("@agent-ledger/core"); const store = await core.openStore("memory:"); console.log(typeof core.SessionRecorder, store.constructor.name);',
    );
    expect(output).toContain("function MemoryEventStore");
    expect(status).toBe(0);
  });

  it("names the missing driver when a store subpath needs it", () => {
    const { status, output } = runModule('await import("@agent-ledger/core/postgres");');
    expect(status).not.toBe(0);
    expect(output).toContain("Cannot find package 'pg'");
  });

  it("openStore names the driver to install, as a LedgerError, for each driver-backed URL", () => {
    const urls = [
      ["sqlite:./ledger.db", "better-sqlite3"],
      ["postgres://localhost/db", "pg"],
      ["mysql://localhost/db", "mysql2"],
      ["redis://localhost", "ioredis"],
    ] as const;
    const { status, output } = runModule(
      `const { openStore, LedgerError } = await import("@agent-ledger/core");
      for (const url of ${JSON.stringify(urls.map(([url]) => url))}) {
        try { await openStore(url, { init: false }); console.log("opened", url); }
        catch (error) { console.log(url, LedgerError.isInstance(error) ? error.code : "not a LedgerError", "|", error.message); }
      }`,
    );
    expect(status).toBe(0);
    const lines = output.split("\n");
    for (const [url, driver] of urls) {
      const scheme = url.slice(0, url.indexOf(":") + 1);
      expect(lines).toContain(
        `${url} store-unavailable | ${scheme} store URLs need the ${driver} package, an optional peer dependency of @agent-ledger/core: npm install ${driver}`,
      );
    }
  });

  it("records a LangChain.js app through @agent-ledger/langchain/callbacks with @langchain/core alone", () => {
    linkDeclared(["@agent-ledger/langchain"], { optionalPeers: false });
    const { status, output } = runModule(
      `const { openStore, readWholeSession } = await import("@agent-ledger/core");
      const { LedgerCallbackHandler } = await import("@agent-ledger/langchain/callbacks");
      const { FakeListChatModel } = await import("@langchain/core/utils/testing");
      const { DynamicTool } = await import("@langchain/core/tools");
      const store = await openStore("memory:");
      const handler = new LedgerCallbackHandler({ store, sessionId: "s" });
      await new FakeListChatModel({ responses: ["hi"] }).invoke("hello", { callbacks: [handler] });
      const echo = new DynamicTool({ name: "echo", description: "echo", func: async (text) => text });
      await echo.invoke("ping", { callbacks: [handler] });
      console.log((await readWholeSession(store, "s")).map((event) => event.type).join(" "));
      try { await import("@agent-ledger/langchain"); console.log("main entry imported"); }
      catch (error) { console.log("main entry:", error.message); }`,
    );
    expect(output).toContain("model.requested model.completed tool.requested tool.completed");
    // The install really lacks the optional peers: the main entry, which needs them, says so.
    expect(output).toMatch(
      /main entry: Cannot find package '(@langchain\/langgraph[^']*|langchain)'/,
    );
    expect(status).toBe(0);
  });

  it("type-checks code using @agent-ledger/core's main entry (no OpenTelemetry types)", () => {
    const { status, output } = typecheck(
      'import { openStore, SessionRecorder } from "@agent-ledger/core";\nconst store = await openStore("memory:");\nexport const recorder = new SessionRecorder({ store, sessionId: "s", actor: { type: "agent", id: "a" } });\n',
      "nodenext",
    );
    expect(output).toBe("");
    expect(status).toBe(0);
  });
});

describe("an install with every peer", () => {
  beforeAll(() => {
    linkDeclared([...ours], { optionalPeers: true });
    for (const name of driverTypes) link(name, root);
  });

  it("imports every documented subpath of every package in Node", () => {
    const source = subpaths.map((path) => `await import(${JSON.stringify(path)});`).join("\n");
    const { status, output } = runModule(`${source}\nconsole.log("imported");`);
    expect(output).toContain("imported");
    expect(status).toBe(0);
  });

  const coreSubpaths = subpaths.filter((path) => path.startsWith("@agent-ledger/core"));
  const imports = coreSubpaths
    .map((path, index) => `import * as m${index} from ${JSON.stringify(path)};`)
    .join("\n");
  for (const resolution of ["node16", "nodenext", "bundler"] as const)
    it(`resolves the types of every @agent-ledger/core subpath under moduleResolution ${resolution}`, () => {
      const { status, output } = typecheck(
        `${imports}\nexport const all = [${coreSubpaths.map((_, index) => `m${index}`).join(", ")}];\n`,
        resolution,
      );
      expect(output).toBe("");
      expect(status).toBe(0);
    });

  it("runs the README quick start, then `agent-ledger inspect` on the file it wrote", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(quickStart).toBeDefined();
    // The names the snippet leaves to the reader: the messages, the model and the tool.
    const given = [
      'const messages = [{ role: "user", content: "book the offsite" }];',
      'const args = { to: "team@example.com" };',
      "async function callTheModel(input: unknown) { return { text: 'ok', input }; }",
      "async function sendEmail(input: unknown) { return { sent: true, input }; }",
    ].join("\n");
    writeFileSync(join(app, "quick-start.ts"), `${given}\n${quickStart}\nexport {};\n`);
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    const compiled = run(process.execPath, [
      ...[tsc, ...STRICT, "--types", "node"],
      ...["--module", "nodenext", "--moduleResolution", "nodenext", "quick-start.ts"],
    ]);
    expect(compiled.output).toBe("");
    const ran = run(process.execPath, ["quick-start.js"]);
    expect(ran.output).toContain("[]");
    expect(ran.status).toBe(0);

    const manifest = manifests.find(([, m]) => m.name === "@agent-ledger/cli")?.[1];
    const bin = join(node_modules(), "@agent-ledger/cli", manifest?.bin?.["agent-ledger"] ?? "");
    expect(readFileSync(bin, "utf8").startsWith("#!/usr/bin/env node")).toBe(true);
    const help = run(process.execPath, [bin, "--help"]);
    expect(help.output).toContain("usage: agent-ledger");
    expect(help.status).toBe(0);
    const inspected = run(process.execPath, [bin, "inspect", "task-42"]);
    expect(inspected.output).toMatch(/session task-42 {2}6 events {2}1 run {2}0 unresolved/);
    // The quick start closes its run: inspect does not read it as still running.
    expect(inspected.output).toMatch(/\(\S+\) {2}COMPLETED /);
    expect(inspected.status).toBe(0);
  });
});
