import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstReleaseSqlite, shippedMigrations } from "../older-ledger.test.data.js";
import { runBin } from "../session-fixture.test.data.js";

const directory = scratchDirectory("agent-ledger-upgrade-", { beforeAll, afterAll });
const latest = shippedMigrations("sqlite").length;
let count = 0;

/** A new file of the first release holding session "old"; its path and store URL. */
async function olderFile(): Promise<{ path: string; storeUrl: string }> {
  const path = join(directory, `older-${++count}.db`);
  await firstReleaseSqlite(path, "old");
  return { path, storeUrl: `sqlite:${path}` };
}

/** What an upgrade changes in the file: its bytes and its recorded versions. */
function fileState(path: string): { size: number; sha256: string; versions: number[] } {
  const bytes = readFileSync(path);
  const database = new Database(path);
  try {
    return {
      size: bytes.length,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      versions: database
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .pluck()
        .all() as number[],
    };
  } finally {
    database.close();
  }
}

describe("agent-ledger on a ledger of an older release", () => {
  it("every command but upgrade refuses it (exit 1, saying how to upgrade) and changes nothing", async () => {
    const { path, storeUrl } = await olderFile();
    const before = fileState(path);
    expect(before.versions).toEqual([1]);
    for (const command of [
      ["sessions"],
      ["inspect", "old"],
      ["verify", "old"],
      ["export", "old"],
      ["tail", "old"],
      ["serve"],
      ["resolve", "old", "c1", "--abandon", "paid by phone"],
      ["delete", "old", "--yes"],
      ["collect-blobs"],
    ]) {
      const result = await runBin(["--store", storeUrl, ...command]);
      expect(result.code, `${command[0]}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(
        `the ledger at ${path} is at schema version 1, an older release's; this release reads schema version ${latest}`,
      );
      expect(result.stderr).toContain(
        `run agent-ledger upgrade --store ${storeUrl} once no agent of an older release writes to this ledger`,
      );
    }
    // A store from the environment is left to it, as in every command agent-ledger prints.
    const fromEnv = await runBin(["inspect", "old"], { AGENT_LEDGER_STORE: storeUrl });
    expect(fromEnv.code).toBe(1);
    expect(fromEnv.stderr).toContain(
      "run agent-ledger upgrade once no agent of an older release writes to this ledger",
    );
    expect(fileState(path)).toEqual(before);
  });

  it("upgrade upgrades it, then the other commands read it; run again, it says it is current", async () => {
    const { path, storeUrl } = await olderFile();
    const upgraded = await runBin(["--store", storeUrl, "upgrade"]);
    expect(upgraded.stderr).toBe("");
    expect(upgraded.code).toBe(0);
    expect(upgraded.stdout).toBe(
      `upgraded the ledger at ${path} from schema version 1 to ${latest}\n`,
    );
    expect(fileState(path).versions).toEqual(
      Array.from({ length: latest }, (_, index) => index + 1),
    );
    const inspect = await runBin(["--store", storeUrl, "inspect", "old", "--json"]);
    expect(inspect.code, inspect.stderr).toBe(0);
    expect(JSON.parse(inspect.stdout).unresolved).toHaveLength(1);
    expect((await runBin(["--store", storeUrl, "verify", "old"])).code).toBe(0);

    const again = await runBin(["--store", storeUrl, "upgrade"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `the ledger at ${path} is already at the schema version this release reads: nothing to upgrade\n`,
    );
    const json = await runBin(["--store", storeUrl, "upgrade", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ location: path, kind: "sqlite", upgraded: false });
  });

  it("a ledger a newer release upgraded: every command, upgrade too, says so (exit 1, not 4) and changes nothing", async () => {
    const { path, storeUrl } = await olderFile();
    expect((await runBin(["--store", storeUrl, "upgrade"])).code).toBe(0);
    const database = new Database(path);
    database.prepare("INSERT INTO schema_version VALUES (?, 'future', 'now')").run(latest + 1);
    database.close();
    const before = fileState(path);
    for (const command of [["sessions"], ["inspect", "old"], ["verify", "old"], ["upgrade"]]) {
      const result = await runBin(["--store", storeUrl, ...command]);
      expect(result.code, `${command[0]}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(
        `the ledger at ${path} is at schema version ${latest + 1}, a newer release's; this release reads schema version ${latest}`,
      );
      expect(result.stderr).toContain("run the agent-ledger of the release that upgraded it");
      expect(result.stderr).not.toContain("cannot reach");
    }
    expect(fileState(path)).toEqual(before);
  });

  it("upgrade --json says what it did", async () => {
    const { path, storeUrl } = await olderFile();
    const result = await runBin(["--store", storeUrl, "upgrade", "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      location: path,
      kind: "sqlite",
      upgraded: true,
      from: 1,
      to: latest,
    });
  });

  it("upgrade makes no ledger where there is none, and takes no arguments", async () => {
    const missing = join(directory, "missing.db");
    const result = await runBin(["--store", `sqlite:${missing}`, "upgrade"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`no ledger at ${missing}`);
    expect(existsSync(missing)).toBe(false);
    const extra = await runBin(["--store", `sqlite:${missing}`, "upgrade", "now"]);
    expect(extra.code).toBe(2);
  });

  it("is listed in the help", async () => {
    const help = await runBin(["--help"]);
    expect(help.stdout).toMatch(/^ {2}agent-ledger upgrade \[--json\]$/m);
    const own = await runBin(["help", "upgrade"]);
    expect(own.code).toBe(0);
    expect(own.stdout).toMatch(/^agent-ledger upgrade/);
  });
});
