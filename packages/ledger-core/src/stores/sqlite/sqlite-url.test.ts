import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { openStore } from "../../store/open-store.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { sqlitePath } from "./sqlite-url.js";

const folder = scratchDirectory("ledger-sqlite-url-", { beforeAll, afterAll });

/** What openStore(url) rejects with (undefined if it opened, which the callers expect not to). */
async function refusal(url: string): Promise<LedgerError | undefined> {
  return openStore(url).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (error: LedgerError) => error,
  );
}

/** Opens (creating) the ledger at `url` and starts one run in it. */
async function startRunAt(url: string): Promise<void> {
  const store = await openStore(url);
  await store.append({
    sessionId: "s",
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started" }],
  });
  await store.close();
}

/** Opens the ledger at each of `urls` (openStore({ create: false })): each reads that run. */
async function expectSameLedger(urls: string[]): Promise<void> {
  for (const url of urls) {
    const reader = await openStore(url, { create: false });
    expect((await reader.readRun({ sessionId: "s", runId: "r" })).events, url).toHaveLength(1);
    await reader.close();
  }
}

describe("sqlite: and file: URLs", () => {
  it("reads the path of each form", () => {
    expect(sqlitePath("sqlite:./ledger.db")).toBe("./ledger.db");
    expect(sqlitePath("sqlite::memory:")).toBe(":memory:");
    expect(sqlitePath("sqlite:///var/ledger.db")).toBe("/var/ledger.db");
    expect(sqlitePath("file:///var/ledger.db")).toBe("/var/ledger.db");
    expect(sqlitePath("file:ledger.db")).toBe("ledger.db");
    expect(() => sqlitePath("sqlite:")).toThrow(/needs a path/);
  });

  it("refuses a query at $.url, naming it (a secret as ***), and creates nothing", async () => {
    // sqlite:./ledger.db?mode=ro opened, and to write created, a second ledger in a file named
    // "ledger.db?mode=ro"; file:///...?mode=ro dropped the query unread.
    const ledger = join(folder, "ledger.db");
    const cases: [string, string][] = [
      [`sqlite:${ledger}?mode=ro`, '"?mode=ro"'],
      [`sqlite:${ledger}?cache=shared&mode=rwc`, '"?cache=shared&mode=rwc"'],
      [`sqlite:${ledger}?password=s3cret-pw`, '"?password=***"'],
      [`file:${ledger}?mode=ro`, '"?mode=ro"'],
      [`${pathToFileURL(ledger).href}?mode=ro`, '"?mode=ro"'],
      ["sqlite::memory:?cache=shared", '"?cache=shared"'],
    ];
    for (const [url, query] of cases) {
      const error = await refusal(url);
      expect(LedgerError.isInstance(error, "invalid-argument"), url).toBe(true);
      expect(error?.path).toBe("$.url");
      expect(error?.message).toContain(`a SQLite URL takes no query (${query})`);
      expect(error?.message).toContain("write %3F in its place (sqlite:./a%3Fb.db opens a?b.db)");
      expect(error?.message).not.toContain("s3cret");
    }
    expect(readdirSync(folder)).toEqual([]);
  });

  it("opens a file whose name holds ? when the URL has %3F in its place, and decodes nothing else", async () => {
    const url = `sqlite:${join(folder, "ledger.db%3fmode=ro %20.db")}`;
    expect(sqlitePath(url)).toBe(join(folder, "ledger.db?mode=ro %20.db"));
    await startRunAt(url);
    expect(readdirSync(folder)).toContain("ledger.db?mode=ro %20.db");
    // The same file, through a file: URL of each form, and openStore({ create: false }).
    await expectSameLedger([
      `file:${join(folder, "ledger.db%3Fmode=ro %20.db")}`,
      pathToFileURL(join(folder, "ledger.db?mode=ro %20.db")).href,
    ]);
  });

  it("refuses a fragment at $.url in every form, and creates nothing", async () => {
    // sqlite:<dir>/run#1.db made a file named "run#1.db", where file:///<dir>/run#1.db opened
    // "<dir>/run" (the URL's fragment dropped): one text, two files.
    const ledger = join(folder, "fragments", "run");
    mkdirSync(join(folder, "fragments"));
    for (const url of [
      `sqlite:${ledger}#1.db`,
      `sqlite://${ledger}#1.db`,
      `file:${ledger}#1.db`,
      `${pathToFileURL(ledger).href}#1.db`,
      "sqlite::memory:#1",
    ]) {
      const error = await refusal(url);
      expect(LedgerError.isInstance(error, "invalid-argument"), url).toBe(true);
      expect(error?.path).toBe("$.url");
      expect(error?.message).toContain('a SQLite URL takes no fragment ("#1');
      expect(error?.message).toContain("write %23 in its place (sqlite:./a%23b.db opens a#b.db)");
    }
    expect(readdirSync(join(folder, "fragments"))).toEqual([]);
  });

  it("opens a file whose name holds # when the URL has %23 in its place, in every form", async () => {
    const file = join(folder, "run#1.db");
    await startRunAt(`sqlite:${join(folder, "run%231.db")}`);
    expect(readdirSync(folder)).toContain("run#1.db");
    const same = [`file:${join(folder, "run%231.db")}`, pathToFileURL(file).href];
    for (const url of same) expect(sqlitePath(url)).toBe(file);
    await expectSameLedger(same);
  });

  it("reads sqlite:// as a file: URL: an empty host or localhost, then an absolute path; refuses any other host at $.url, creating nothing", async () => {
    // sqlite://tmp/x.db was the relative path tmp/x.db, and sqlite://localhost/tmp/z.db the
    // relative localhost/tmp/z.db, while sqlite:///tmp/y.db was /tmp/y.db.
    const ledger = join(folder, "hosts.db");
    expect(sqlitePath(`sqlite://${ledger}`)).toBe(ledger);
    expect(sqlitePath(`sqlite://localhost${ledger}`)).toBe(ledger);
    expect(sqlitePath(`sqlite://LocalHost${ledger}`)).toBe(ledger);
    await startRunAt(`sqlite://localhost${ledger}`);
    await expectSameLedger([`sqlite://${ledger}`, `file:${ledger}`]);

    const workingFolder = process.cwd();
    const inside = join(folder, "cwd");
    mkdirSync(join(inside, "tmp"), { recursive: true });
    process.chdir(inside);
    try {
      for (const [url, host, relative] of [
        ["sqlite://tmp/x.db", "tmp", "tmp/x.db"],
        ["sqlite://ledger.db", "ledger.db", "ledger.db"],
        ["sqlite://db.internal/var/ledger.db", "db.internal", "db.internal/var/ledger.db"],
      ] as const) {
        const error = await refusal(url);
        expect(LedgerError.isInstance(error, "invalid-argument"), url).toBe(true);
        expect(error?.path).toBe("$.url");
        expect(error?.message).toContain(`names a host (${JSON.stringify(host)})`);
        expect(error?.message).toContain(`write sqlite:///${relative};`);
        expect(error?.message).toContain(`write sqlite:./${relative}`);
      }
      expect(readdirSync(inside)).toEqual(["tmp"]);
      expect(readdirSync(join(inside, "tmp"))).toEqual([]);
    } finally {
      process.chdir(workingFolder);
    }
    expect(() => sqlitePath("sqlite://localhost")).toThrow(/needs a path/);
  });
});
