import { spawn } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { NewEvent } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, runBin } from "./session-fixture.test.data.js";

const scratch = scratchDirectory("cli-export-interrupt-", { beforeAll, afterAll });
const ledger = join(scratch, "ledger.db");
const store = `sqlite:${ledger}`;
const EVENTS = 40_000;

/** The temporary files an export to `name` in the scratch directory has beside it. */
function temporaries(name: string): string[] {
  return readdirSync(scratch).filter((file) => file.startsWith(`.${name}.`));
}

/** Polls until `check` holds (an export's temporary file appears, say). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (const start = Date.now(); !check(); ) {
    if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Starts `agent-ledger export big ...args` and resolves with its exit once it has ended; its
 * stdout a pipe, or the file descriptor `stdout` (`> file`).
 */
function startExport(args: string[], stdout: "pipe" | number = "pipe") {
  const child = spawn(process.execPath, [BIN, "export", "big", "--store", store, ...args], {
    stdio: ["ignore", stdout, "pipe"],
    env: { ...process.env, AGENT_LEDGER_STORE: "" },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>(
    (resolve) => child.once("exit", (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

beforeAll(async () => {
  // A session long enough that an export is still running when the test stops it.
  const ledgerStore = new SqliteEventStore({ path: ledger });
  await ledgerStore.init();
  for (let seq = 0; seq < EVENTS; seq += 1000) {
    const events = Array.from(
      { length: 1000 },
      (_, index): NewEvent =>
        seq + index === 0
          ? { type: "run.started", actor: { type: "agent", id: "a" }, payload: {} }
          : { type: "x.note", payload: { note: `note ${seq + index}`, pad: "x".repeat(200) } },
    );
    await ledgerStore.append({ sessionId: "big", runId: "r", expectedSeq: seq, events });
  }
  await ledgerStore.close();
}, 60_000);

describe("agent-ledger export --output, stopped before the end", () => {
  it("Ctrl-C stops it between pages: exit 130, the file that was there kept, no temporary left", async () => {
    writeFileSync(join(scratch, "ctrl-c.jsonl"), "PREVIOUS EXPORT\n");
    const { child, exited } = startExport(["-o", join(scratch, "ctrl-c.jsonl")]);
    await until(() => temporaries("ctrl-c.jsonl").length > 0, "the export's temporary file");
    child.kill("SIGINT");
    const { code, stderr } = await exited;
    expect(code).toBe(130);
    expect(stderr).toMatch(/export interrupted after \d+ events: .*ctrl-c\.jsonl left as it was/);
    expect(readFileSync(join(scratch, "ctrl-c.jsonl"), "utf8")).toBe("PREVIOUS EXPORT\n");
    expect(temporaries("ctrl-c.jsonl")).toEqual([]);
  });

  it("a second Ctrl-C quits at once, and still takes the temporary file with it", async () => {
    writeFileSync(join(scratch, "twice.json"), "PREVIOUS EXPORT\n");
    // ATIF is projected whole before it is written: the first Ctrl-C cannot stop it.
    const { child, exited } = startExport(["--format", "atif", "-o", join(scratch, "twice.json")]);
    await until(() => temporaries("twice.json").length > 0, "the export's temporary file");
    // Two signals sent at once are one for the kernel: the second comes a moment later.
    child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 30));
    child.kill("SIGINT");
    const { code } = await exited;
    expect(code).toBe(130);
    expect(readFileSync(join(scratch, "twice.json"), "utf8")).toBe("PREVIOUS EXPORT\n");
    expect(temporaries("twice.json")).toEqual([]);
  });

  it("killed (SIGKILL), it leaves its temporary; the next export to that path removes it, not a running export's", async () => {
    const output = join(scratch, "killed.jsonl");
    writeFileSync(output, "PREVIOUS EXPORT\n");
    const { child, exited } = startExport(["-o", output]);
    await until(() => temporaries("killed.jsonl").length > 0, "the export's temporary file");
    child.kill("SIGKILL");
    expect((await exited).signal).toBe("SIGKILL");
    const [left] = temporaries("killed.jsonl");
    expect(left).toMatch(new RegExp(`^\\.killed\\.jsonl\\.${child.pid}\\.[0-9a-f]{8}\\.tmp$`));
    expect(readFileSync(output, "utf8")).toBe("PREVIOUS EXPORT\n");

    // Another export to the same path is writing at this moment (a live process's file).
    const running = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    const theirs = `.killed.jsonl.${running.pid}.0123abcd.tmp`;
    writeFileSync(join(scratch, theirs), "");
    try {
      const again = await runBin(["export", "big", "--store", store, "-o", output]);
      expect(again.code).toBe(0);
      expect(temporaries("killed.jsonl")).toEqual([theirs]);
    } finally {
      running.kill("SIGKILL");
    }
    expect(readFileSync(output, "utf8").trimEnd().split("\n")).toHaveLength(EVENTS);
  });
});

describe("agent-ledger export > file, stopped before the end", () => {
  it("Ctrl-C stops it between pages even when stdout is a file on SQLite: exit 130, every event it says it wrote written", async () => {
    // SQLite's reads and the writes to a file that is stdout are both synchronous: the export's
    // loop never gave the event loop the turn in which the SIGINT handler runs, and went on to
    // the end.
    const path = join(scratch, "redirected.jsonl");
    const file = openSync(path, "w");
    const { child, exited } = startExport([], file);
    closeSync(file);
    await until(() => statSync(path).size > 0, "the export's first lines");
    child.kill("SIGINT");
    const { code, stderr } = await exited;
    expect(code).toBe(130);
    const said = /agent-ledger: export interrupted after (\d+) events\n/.exec(stderr)?.[1];
    expect(said).toBeDefined();
    const lines = readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line !== "");
    expect(lines).toHaveLength(Number(said));
    expect(lines.length).toBeLessThan(EVENTS);
  });
});
