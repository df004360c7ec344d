import { join } from "node:path";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory, storedBytes } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { heldBlobs, runCliCaptured, runCliInterrupted } from "../interrupt-fixture.test.data.js";

/** A SQLite ledger holding two blobs no session names (one long enough to be deflated). */
async function ledgerWithOrphans() {
  const path = join(scratchDirectory("agent-ledger-collect-", onTestFinished), "l.db");
  const contents = ["a short orphan", `a long orphan ${"that repeats ".repeat(400)}`];
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  const refs = (await store.putBlobs(contents)).sort();
  return {
    collect: (args: string[]) => ["--store", `sqlite:${path}`, "collect-blobs", ...args],
    refs,
    bytes: storedBytes(contents),
    held: () => heldBlobs(store, refs),
  };
}

describe("agent-ledger collect-blobs --dry-run", () => {
  it("says how many blobs and bytes a pass would delete, and deletes nothing", async () => {
    const { collect, refs, bytes, held } = await ledgerWithOrphans();
    const dry = await runCliCaptured(collect(["--blob-grace", "0", "--dry-run"]));
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      `would delete 2 blob(s), ${bytes} bytes stored, that no existing session references (kept: those put within the last 0ms); nothing was deleted\n`,
    );
    expect(await held()).toEqual(refs);

    const json = await runCliCaptured(collect(["--blob-grace", "0", "--dry-run", "--json"]));
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ deletedBlobs: 0, wouldDelete: { blobs: 2, bytes } });
    expect(await held()).toEqual(refs);

    const young = await runCliCaptured(collect(["--dry-run"]));
    expect(young.stdout).toMatch(
      /^would delete 0 blob\(s\), 0 bytes stored, .* within the last 10m\); nothing was deleted\n$/,
    );

    // The pass then deletes what the dry run counted.
    const pass = await runCliCaptured(collect(["--blob-grace", "0", "--json"]));
    expect(JSON.parse(pass.stdout)).toEqual({ deletedBlobs: 2 });
    expect(await held()).toEqual([]);
  });

  it("stopped by Ctrl-C, says what it counted until then and that nothing was deleted (exit 130)", async () => {
    const { collect, refs, held } = await ledgerWithOrphans();
    const stopped = await runCliInterrupted(collect(["--blob-grace", "0", "--dry-run"]));
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toBe("");
    expect(stopped.stderr).toBe(
      "agent-ledger: collect-blobs --dry-run interrupted after counting 0 blob(s), 0 bytes stored, in the pages it looked at; nothing was deleted\n",
    );
    const json = await runCliInterrupted(collect(["--blob-grace", "0", "--dry-run", "--json"]));
    expect(json.code).toBe(130);
    expect(JSON.parse(json.stdout)).toEqual({
      deletedBlobs: 0,
      wouldDelete: { blobs: 0, bytes: 0 },
      stopped: true,
    });
    expect(await held()).toEqual(refs);
  });
});
