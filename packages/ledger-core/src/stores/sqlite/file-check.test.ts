import { rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { fileCheckProcesses, makeSlowToCheck } from "../../testing/slow-file-check.js";
import { SqliteEventStore as SourceStore } from "./sqlite-store.js";

// The check runs a script compiled beside the store's code: these tests use the built store.
const { SqliteEventStore } = (await import(
  new URL("../../../dist/stores/sqlite/index.js", import.meta.url).href
)) as typeof import("./index.js");

const folder = scratchDirectory("agent-ledger-file-check-", { beforeAll, afterAll });

async function ledger(name: string, slowRows = 0): Promise<{ path: string; store: SourceStore }> {
  const path = join(folder, name);
  const made = new SqliteEventStore({ path });
  await made.init();
  await made.close();
  if (slowRows > 0) await makeSlowToCheck(path, slowRows);
  const store = new SqliteEventStore({ path });
  await store.init();
  return { path, store };
}

describe("SqliteEventStore.fileProblems", () => {
  it("none on a sound file; after close() refused, not read as a damaged file", async () => {
    const { store } = await ledger("sound.db");
    expect(await store.fileProblems()).toEqual([]);
    await store.close();
    await expect(store.fileProblems()).rejects.toMatchObject({
      code: "store-unavailable",
      nothingWritten: true,
    });
  });

  it("an aborted signal stops a check under way at once: stopped, its process gone; a next check runs whole", async () => {
    // About 3 s to check here.
    const { path, store } = await ledger("slow.db", 800);
    try {
      const controller = new AbortController();
      const checking = store.fileProblems({ signal: controller.signal });
      for (const start = Date.now(); fileCheckProcesses(path).length === 0; await sleep(5))
        expect(Date.now() - start).toBeLessThan(10_000);
      const abortedAt = Date.now();
      controller.abort();
      expect(await checking).toEqual({ stopped: true });
      const stoppedIn = Date.now() - abortedAt;
      expect(fileCheckProcesses(path)).toEqual([]);

      const start = Date.now();
      expect(await store.fileProblems()).toEqual([]);
      const whole = Date.now() - start;
      expect(whole).toBeGreaterThan(1000);
      expect(stoppedIn).toBeLessThan(whole / 4);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("an aborted signal before the check: stopped, no check begun; a bad signal is refused", async () => {
    const { path, store } = await ledger("aborted.db", 800);
    try {
      const start = Date.now();
      expect(await store.fileProblems({ signal: AbortSignal.abort() })).toEqual({ stopped: true });
      expect(Date.now() - start).toBeLessThan(1000);
      expect(fileCheckProcesses(path)).toEqual([]);
      await expect(
        store.fileProblems({ signal: true as unknown as AbortSignal }),
      ).rejects.toMatchObject({ code: "invalid-argument" });
    } finally {
      await store.close();
    }
  });

  it("a file the check cannot open is store-unavailable, as the store's own connection says it", async () => {
    const { path, store } = await ledger("gone.db");
    try {
      // The store's connection keeps the file it opened; a new one finds nothing there.
      rmSync(path);
      await expect(store.fileProblems()).rejects.toMatchObject({
        code: "store-unavailable",
        message: expect.stringContaining(`cannot open the SQLite database ${path}: SqliteError`),
      });
    } finally {
      await store.close();
    }
  });

  it("a check that cannot start is store-unavailable (from the source, its script is not compiled beside it)", async () => {
    const path = join(folder, "source.db");
    const store = new SourceStore({ path });
    await store.init();
    try {
      await expect(store.fileProblems()).rejects.toMatchObject({
        code: "store-unavailable",
        message: expect.stringContaining("ended without an answer (exit code 1)"),
      });
    } finally {
      await store.close();
    }
  });

  it("a database in memory is checked on the store's connection", async () => {
    const store = new SqliteEventStore({ path: ":memory:" });
    await store.init();
    expect(await store.fileProblems({ signal: new AbortController().signal })).toEqual([]);
    await store.close();
  });
});
