import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "@agent-ledger/cli";
import {
  freshPlaces,
  SERVER_URLS,
  type ServerKind,
  scratchDirectory,
  serverAvailable,
} from "@agent-ledger/core/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// `npm run demo -- --store <url>`: the demo on a server store, as a user runs it against theirs.
// Each server's store lives under a name of its own (schema, database, key prefix), removed after.
const scratch = scratchDirectory("agent-ledger-plain-loop-servers-", { beforeAll, afterAll });
const demo = fileURLToPath(new URL("../dist/demo.js", import.meta.url));
const places = freshPlaces(afterAll);
const schema = places.schema("demo");
const database = places.database("demo");
const name = `demo_${randomUUID().replaceAll("-", "")}`;

interface Server {
  kind: ServerKind;
  label: string;
  url: string;
  setUp?: () => Promise<unknown>;
  tearDown?: () => Promise<void>;
}

const servers: Server[] = [
  {
    kind: "postgres",
    label: "PostgreSQL",
    url: `${SERVER_URLS.postgres}${SERVER_URLS.postgres.includes("?") ? "&" : "?"}schema=${schema}`,
  },
  {
    kind: "mysql",
    label: "MySQL/MariaDB",
    url: database.url,
    setUp: () => database.create(),
  },
  {
    kind: "redis",
    label: "Redis",
    url: (() => {
      const url = new URL(SERVER_URLS.redis);
      url.searchParams.set("keyPrefix", `${name}:`);
      return url.toString();
    })(),
    async tearDown() {
      const client = new Redis(SERVER_URLS.redis);
      try {
        for await (const keys of client.scanStream({ match: `${name}:*`, count: 500 }))
          if ((keys as string[]).length > 0) await client.del(...(keys as string[]));
      } finally {
        client.disconnect();
      }
    },
  },
];

/** `agent-ledger --store <store> ...args`, run by the CLI's own entry point, its output kept. */
async function agentLedger(
  store: string,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: "", stderr: "" };
  const stream = (name: keyof typeof out) => ({
    write: (chunk: string) => {
      out[name] += chunk;
      return true;
    },
  });
  const code = await runCli(["--store", store, ...args], {
    stdout: stream("stdout"),
    stderr: stream("stderr"),
    env: {},
  });
  return { code, ...out };
}

function runDemo(
  dir: string,
  store: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return runDemoWith(dir, ["--store", store]);
}

function runDemoWith(
  dir: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [demo, ...args],
      { env: { ...process.env, AGENT_LEDGER_DEMO_DIR: dir } },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

for (const server of servers) {
  const available = await serverAvailable(server.kind);
  describe.skipIf(!available)(`npm run demo -- --store <${server.label} URL>`, () => {
    beforeAll(async () => {
      // The demo runs the compiled example: npm test builds it (tsc -b) before vitest.
      if (!existsSync(demo)) throw new Error("build first: npm run build");
      await server.setUp?.();
    });
    afterAll(async () => server.tearDown?.());

    it("crashes, inspects and resumes on that store, and ends equal", async () => {
      const { code, stdout, stderr } = await runDemo(join(scratch, server.kind), server.url);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain(`records every model and tool call to a ${server.kind} store.`);
      expect(stdout).toContain("child process ended by SIGKILL");
      expect(stdout).toMatch(/1 call went out and never came back:\n {2}- tool call write_note/);
      expect(stdout).toContain("2 model calls answered from the ledger (not paid again)");
      expect(stdout).toContain("retried because idempotent: write_note");
      expect(stdout).toContain("hash chain verified: true");
      expect(stdout).toContain("equal: nothing was paid for twice");
      // The commands it prints name that store, quoted for a shell where it needs it.
      expect(stdout).toMatch(/npm run agent-ledger -- inspect demo-\d+ --store \S+/);
      const store = server.url.includes("?") ? `'${server.url}'` : server.url;
      expect(stdout).toContain(`--store ${store}\n`);
      // The viewer's command opens this session's page (serve --session prints its URL), not
      // the list of every session the user's store holds.
      expect(stdout).toContain(
        `Open the viewer on this session:\n  npm run agent-ledger -- serve --session ${/inspect (demo-\d+) --store/.exec(stdout)?.[1]} --store ${store}\n`,
      );
      // And how to remove the session it left there, which works.
      const sessionId = /inspect (demo-\d+) --store/.exec(stdout)?.[1] as string;
      expect(stdout).toContain(
        `(to remove the demo's session from that store: npm run agent-ledger -- delete ${sessionId} --yes --store ${store})`,
      );
      const deleted = await agentLedger(server.url, "delete", sessionId, "--yes");
      expect(deleted.code, deleted.stderr).toBe(0);
      const listed = await agentLedger(server.url, "sessions", "--json");
      expect(JSON.parse(listed.stdout)).toEqual([]);
    });
  });
}

describe("npm run demo, no options", () => {
  it("runs on a SQLite file in a directory that does not exist yet (a fresh checkout)", async () => {
    const dir = join(scratch, "fresh", "not-yet");
    const { code, stdout, stderr } = await runDemoWith(dir, []);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain("records every model and tool call to a sqlite store.");
    expect(stdout).toContain("equal: nothing was paid for twice");
    expect(existsSync(join(dir, "ledger.db"))).toBe(true);
  });

  it("run again, replaces its own files and leaves the framework demos' ledgers in .demo", async () => {
    const dir = join(scratch, "again");
    // What `npm run demo:langchain` leaves beside it, and whose viewer command it printed.
    const other = join(dir, "langchain", "crash", "ledger.db");
    mkdirSync(join(dir, "langchain", "crash"), { recursive: true });
    writeFileSync(other, "the langchain demo's ledger");
    const first = await runDemoWith(dir, []);
    expect(first.code, first.stderr).toBe(0);
    const second = await runDemoWith(dir, []);
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(other, "utf8")).toBe("the langchain demo's ledger");
    // The first run's ledger went: the second's holds its session only.
    const listed = await agentLedger(`sqlite:${join(dir, "ledger.db")}`, "sessions", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as { sessionId: string }[]).map((session) => session.sessionId),
    ).toEqual([second.stdout.match(/inspect (demo-\d+)/)?.[1]]);
  });
});

describe("the demo's options", () => {
  it("--help prints the usage; an option it does not know is refused with it", async () => {
    const help = await runDemoWith(join(scratch, "help"), ["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: npm run demo \[-- --store <url>\]\n/);
    const unknown = await runDemoWith(join(scratch, "unknown"), ["--stor", "sqlite:x.db"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--stor'");
    expect(unknown.stderr).toContain("usage: npm run demo [-- --store <url>]");
    expect(unknown.stdout).toBe("");
  });
});

describe("the demo's store", () => {
  it("refuses memory:, which its processes would not share", async () => {
    const { code, stderr } = await runDemo(join(scratch, "memory"), "memory:");
    expect(code).toBe(2);
    expect(stderr).toContain("the crashed and the resumed process must share the store");
  });

  it("refuses a store it cannot reach before any process runs, with the password left out", async () => {
    const dir = join(scratch, "unreachable");
    const { code, stdout, stderr } = await runDemo(dir, "postgres://me:secret@127.0.0.1:1/ledger");
    expect(code).toBe(2);
    expect(stderr).toMatch(/^npm run demo -- --store <url>: postgres init failed: .*ECONNREFUSED/);
    expect(stderr).not.toContain("secret");
    expect(stdout).toBe("");
    expect(existsSync(join(dir, "baseline"))).toBe(false);
  });
});
