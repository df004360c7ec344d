import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin } from "./session-fixture.test.data.js";

describe("agent-ledger --store with SQLite paths", () => {
  const directory = join(
    scratchDirectory("agent-ledger-paths-", { beforeAll, afterAll }),
    "on call",
  );
  const file = join(directory, "ledger.db");

  beforeAll(async () => {
    mkdirSync(directory);
    const store = await openStore(`sqlite:${file}`);
    await new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    }).startRun();
    await store.close();
  });

  it("opens a file: URL whose path is percent-encoded (a space is %20)", async () => {
    const url = pathToFileURL(file).href;
    expect(url).toContain("on%20call");
    const result = await runBin(["--store", url, "sessions", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject([{ sessionId: "s" }]);
  });

  it("exits 2 for a SQLite URL with a query, naming it (a password as ***), and creates no file", async () => {
    // It opened (and a writer created) the file the query named: ledger.db?mode=ro.
    for (const [url, query] of [
      [`sqlite:${file}?mode=ro`, "?mode=ro"],
      [`${pathToFileURL(file).href}?mode=ro`, "?mode=ro"],
      [`sqlite:${file}?password=s3cret-pw`, "?password=***"],
    ] as const) {
      const result = await runBin(["--store", url, "sessions"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`a SQLite URL takes no query (${JSON.stringify(query)})`);
      expect(result.stderr).not.toContain("s3cret");
    }
    expect(readdirSync(directory)).toEqual(["ledger.db"]);
  });

  it("exits 2 for a SQLite URL with a fragment in either form, and opens a#b.db from a%23b.db", async () => {
    // file:///.../ledger.db#backup opened ledger.db (the fragment dropped), where
    // sqlite:.../ledger.db#backup named (and a writer made) a file "ledger.db#backup".
    for (const url of [`sqlite:${file}#backup`, `${pathToFileURL(file).href}#backup`]) {
      const result = await runBin(["--store", url, "sessions"]);
      expect(result.code, url).toBe(2);
      expect(result.stderr).toContain('a SQLite URL takes no fragment ("#backup")');
    }
    expect(readdirSync(directory)).toEqual(["ledger.db"]);
    copyFileSync(file, `${file}#backup`);
    const result = await runBin(["--store", `sqlite:${file}%23backup`, "sessions", "--json"]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toMatchObject([{ sessionId: "s" }]);
  });

  it("opens a file whose name holds ? with %3F in its place in the URL", async () => {
    copyFileSync(file, `${file}?mode=ro`);
    const result = await runBin(["--store", `sqlite:${file}%3Fmode=ro`, "sessions", "--json"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject([{ sessionId: "s" }]);
  });

  it("exits 2 for a file: URL that names no local path", async () => {
    const result = await runBin(["--store", "file://server/share/ledger.db", "sessions"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad store URL "file://server/share/ledger.db"');
  });

  it("refuses a file that is not a ledger, and leaves another application's database alone", async () => {
    const other = join(directory, "app.db");
    const database = new Database(other);
    database.exec("CREATE TABLE orders (id INTEGER PRIMARY KEY)");
    database.close();
    const before = readFileSync(other);
    const result = await runBin(["--store", `sqlite:${other}`, "sessions"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`no ledger at ${other}: the file has no agent-ledger tables`);
    expect(readFileSync(other).equals(before)).toBe(true);
    const after = new Database(other, { readonly: true });
    const tables = after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all();
    after.close();
    expect(tables).toEqual([{ name: "orders" }]);

    const text = join(directory, "notes.txt");
    writeFileSync(text, "not a database at all");
    const notSqlite = await runBin(["--store", `sqlite:${text}`, "inspect", "s"]);
    expect(notSqlite.code).toBe(3);
    expect(notSqlite.stderr).toContain(`no ledger at ${text}: the file is not a SQLite database`);
    expect(readFileSync(text, "utf8")).toBe("not a database at all");
  });
});

describe("agent-ledger --store with a server URL that does not parse", () => {
  it("exits 2 naming the URL with its password hidden, even when the password breaks the URL", async () => {
    for (const url of [
      "postgres://app:s3cr/t#pw@db.internal:5432/ledger",
      "mysql://app:s3cr/t#pw@db.internal:3306/ledger",
      "redis://app:s3cr/t#pw@cache.internal:6379/0",
    ]) {
      const result = await runBin(["--store", url, "sessions"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/bad store URL "\w+:\/\/app:\*\*\*@\w+\.internal:\d+\//);
      expect(result.stderr).not.toContain("s3cr");
    }
  });

  it("exits 2 without the password for a URL whose // is missing, a stray %, or no scheme", async () => {
    for (const url of [
      "postgres:/app:s3cretPW@127.0.0.1:1/db",
      "mysql:app:s3cretPW@127.0.0.1:1/db",
      "redis://app:s3cr%et@127.0.0.1:1",
      "app:s3cretPW@127.0.0.1:1/db",
      "postgres://app@127.0.0.1:1/db?sslkey=s3cret.key",
    ]) {
      const result = await runBin(["--store", url, "sessions"]);
      expect(result.code, url).toBe(2);
      expect(result.stderr, url).not.toContain("s3cr");
    }
  });
});

describe("agent-ledger --store with a server URL whose query has a parameter nothing reads", () => {
  it("exits 2 naming it, for PostgreSQL and MySQL alike, before any connection is tried", async () => {
    // Port 1: a URL the store tried to connect with would exit 4 (cannot reach), not 2.
    for (const [url, name] of [
      ["postgres://app:s3cret@127.0.0.1:1/db?shema=agent_ledger", "shema"],
      ["mysql://app:s3cret@127.0.0.1:1/db?timeoutMS=1000", "timeoutMS"],
      ["mariadb://app:s3cret@127.0.0.1:1/db?sslaccept=strict", "sslaccept"],
    ] as const) {
      const result = await runBin(["--store", url, "sessions"]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("bad store URL");
      expect(result.stderr).toContain(`unknown query parameter "${name}"`);
      expect(result.stderr).not.toContain("s3cret");
    }
  });
});

describe("where the store URL came from", () => {
  const directory = scratchDirectory("agent-ledger-origin-", { beforeAll, afterAll });
  const inDirectory = (args: string[], env: Record<string, string | undefined>) =>
    runBin(args, env, { cwd: directory });

  it("refuses memory: with exit 2: the command's own memory store is always empty", async () => {
    for (const [args, env, from] of [
      [["--store", "memory:", "sessions"], {}, "(from --store)"],
      [["sessions"], { AGENT_LEDGER_STORE: "memory:" }, "(from $AGENT_LEDGER_STORE)"],
    ] as const) {
      const result = await runBin([...args], env);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(`a memory: store is one per process ${from}`);
      expect(result.stderr).toContain(
        "use sqlite:<path>, postgres://..., mysql://... or redis://...",
      );
    }
  });

  it("refuses an empty store URL with exit 2, naming where it came from", async () => {
    for (const [args, env, from] of [
      [["--store", "", "sessions"], {}, "(from --store)"],
      [["sessions"], { AGENT_LEDGER_STORE: "" }, "(from $AGENT_LEDGER_STORE)"],
    ] as const) {
      const result = await runBin([...args], env);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        [
          `agent-ledger: the store URL is empty ${from}`,
          "  use sqlite:<path>, postgres://..., mysql://... or redis://...",
          "",
        ].join("\n"),
      );
    }
  });

  it("names a missing SQLite file by its absolute path, where its URL came from, and a hint that fits", async () => {
    const missing = join(directory, "agent-ledger.db");
    for (const [args, env, from, hint] of [
      [
        ["sessions"],
        { AGENT_LEDGER_STORE: undefined },
        "the default, sqlite:./agent-ledger.db",
        "pass --store <url> or set AGENT_LEDGER_STORE",
      ],
      [
        ["--store", "sqlite:./agent-ledger.db", "sessions"],
        {},
        "--store",
        "check the URL given with --store",
      ],
      [
        ["sessions"],
        { AGENT_LEDGER_STORE: "sqlite:./agent-ledger.db" },
        "$AGENT_LEDGER_STORE",
        "check $AGENT_LEDGER_STORE, or pass --store <url>",
      ],
    ] as const) {
      const result = await inDirectory([...args], env);
      expect(result.code, result.stderr).toBe(3);
      expect(result.stderr).toBe(
        `agent-ledger: no ledger at ${missing}: there is no such file (from ${from})\n  ${hint}\n`,
      );
    }
    expect(readdirSync(directory)).toEqual([]);
  });

  it("says a bad URL came from $AGENT_LEDGER_STORE", async () => {
    const result = await runBin(["sessions"], { AGENT_LEDGER_STORE: "http://x" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad store URL "http://x" (from $AGENT_LEDGER_STORE)');
    expect(result.stderr).not.toContain("memory:");
  });

  it("names a URL the store refuses by the flag or variable it came from, not by the library's $.url", async () => {
    // SQLite without a path; Redis and MySQL options the stores check, before any connection.
    for (const [url, said] of [
      ["sqlite:", "a SQLite URL needs a path, e.g. sqlite:./ledger.db"],
      ["redis://127.0.0.1:1?family=9", 'family="9" in the Redis URL is not an IP family'],
      ["mysql://127.0.0.1:1/db?connectionLimit=abc", 'connectionLimit="abc" in the MySQL URL'],
    ] as const)
      for (const [args, env, from] of [
        [["--store", url, "sessions"], {}, "--store"],
        [["sessions"], { AGENT_LEDGER_STORE: url }, "$AGENT_LEDGER_STORE"],
      ] as const) {
        const result = await runBin([...args], env);
        expect(result.code, result.stderr).toBe(2);
        expect(result.stderr).toContain(
          `bad store URL ${JSON.stringify(url)} (from ${from}): ${said}`,
        );
        expect(result.stderr).not.toContain("$.");
      }
  });
});

describe("$AGENT_LEDGER_CONNECT_TIMEOUT_MS", () => {
  const ledger = `sqlite:${join(scratchDirectory("agent-ledger-timeout-", { beforeAll, afterAll }), "l.db")}`;
  beforeAll(async () => {
    await (await openStore(ledger)).close();
  });

  it("exits 2 for a value that is no whole number of milliseconds, rather than 4 (try later) or the default", async () => {
    for (const value of ["0", "-1", "1.5", "abc", "99999999999"]) {
      const result = await runBin(["--store", ledger, "sessions"], {
        AGENT_LEDGER_CONNECT_TIMEOUT_MS: value,
      });
      expect(result.code, value).toBe(2);
      expect(result.stderr, value).toContain("AGENT_LEDGER_CONNECT_TIMEOUT_MS");
    }
    const unset = await runBin(["--store", ledger, "sessions"], {
      AGENT_LEDGER_CONNECT_TIMEOUT_MS: "",
    });
    expect(unset.code, unset.stderr).toBe(0);
  });
});
