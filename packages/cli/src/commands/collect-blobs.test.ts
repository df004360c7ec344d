import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory, storedBytes } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import type { OutputStream } from "../io.js";
import { runCli } from "../run-cli.js";

function collector(): OutputStream & { text: string } {
  const stream = {
    text: "",
    isTTY: false,
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
  };
  return stream;
}

async function cli(url: string, args: string[], signal?: AbortSignal) {
  const stdout = collector();
  const stderr = collector();
  const code = await runCli(["--store", url, "collect-blobs", ...args], {
    stdout,
    stderr,
    env: {},
    ...(signal ? { signal } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A SQLite ledger holding two blobs no session names (one long enough to be deflated). */
async function ledgerWithOrphans() {
  const url = `sqlite:${join(scratchDirectory("agent-ledger-collect-", onTestFinished), "l.db")}`;
  const contents = ["a short orphan", `a long orphan ${"that repeats ".repeat(400)}`];
  const store = await openStore(url);
  const refs = await Promise.all(contents.map((content) => store.putBlob(content)));
  await store.close();
  const bytes = storedBytes(contents);
  const held = async () => {
    const reader = await openStore(url);
    try {
      const found: string[] = [];
      for (const ref of refs)
        await reader.getBlob(ref).then(
          () => found.push(ref),
          () => {},
        );
      return found;
    } finally {
      await reader.close();
    }
  };
  return { url, refs, bytes, held };
}

describe("agent-ledger collect-blobs --dry-run", () => {
  it("says how many blobs and bytes a pass would delete, and deletes nothing", async () => {
    const { url, refs, bytes, held } = await ledgerWithOrphans();
    const dry = await cli(url, ["--blob-grace", "0", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(
      `would delete 2 blob(s), ${bytes} bytes stored, that no existing session references (kept: those put within the last 0ms); nothing was deleted\n`,
    );
    expect(await held()).toEqual(refs);

    const json = await cli(url, ["--blob-grace", "0", "--dry-run", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ deletedBlobs: 0, wouldDelete: { blobs: 2, bytes } });
    expect(await held()).toEqual(refs);

    const young = await cli(url, ["--dry-run"]);
    expect(young.stdout).toMatch(
      /^would delete 0 blob\(s\), 0 bytes stored, .* within the last 10m\); nothing was deleted\n$/,
    );

    // The pass then deletes what the dry run counted.
    const pass = await cli(url, ["--blob-grace", "0", "--json"]);
    expect(JSON.parse(pass.stdout)).toEqual({ deletedBlobs: 2 });
    expect(await held()).toEqual([]);
  });

  it("gives large sizes in KiB, MiB and GiB too", async () => {
    const { formatBytes } = await import("../format.js");
    expect(formatBytes(0)).toBe("0 bytes");
    expect(formatBytes(1)).toBe("1 byte");
    expect(formatBytes(1023)).toBe("1023 bytes");
    expect(formatBytes(1536)).toBe("1.5 KiB (1536 bytes)");
    expect(formatBytes(5 * 1024 ** 2)).toBe("5.0 MiB (5242880 bytes)");
    expect(formatBytes(3.25 * 1024 ** 3)).toBe("3.3 GiB (3489660928 bytes)");
  });

  it("stopped by Ctrl-C, says what it counted until then and that nothing was deleted (exit 130)", async () => {
    const { url, refs, held } = await ledgerWithOrphans();
    const aborted = new AbortController();
    aborted.abort();
    const stopped = await cli(url, ["--blob-grace", "0", "--dry-run"], aborted.signal);
    expect(stopped.code).toBe(130);
    expect(stopped.stdout).toBe("");
    expect(stopped.stderr).toBe(
      "agent-ledger: collect-blobs --dry-run interrupted after counting 0 blob(s), 0 bytes stored, in the pages it looked at; nothing was deleted\n",
    );
    const json = await cli(url, ["--blob-grace", "0", "--dry-run", "--json"], aborted.signal);
    expect(json.code).toBe(130);
    expect(JSON.parse(json.stdout)).toEqual({
      deletedBlobs: 0,
      wouldDelete: { blobs: 0, bytes: 0 },
      stopped: true,
    });
    expect(await held()).toEqual(refs);
  });
});
