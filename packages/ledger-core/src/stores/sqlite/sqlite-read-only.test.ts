import { type SpawnSyncReturns, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { runUntilKilled } from "../../testing/killed-child.test.data.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";

// An on-call engineer reads the agent's ledger file with a user that may read it but not write
// to it or to its folder. Root ignores file modes, so as root the reader runs without the
// capabilities that let it (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH): like
// anyone else, it may then only read the 0444 files and the 0555 folder, even its own.

const core = new URL("../../../dist/index.js", import.meta.url).href;

const asRoot = process.getuid?.() === 0;
const setpriv = asRoot ? spawnSync("setpriv", ["--version"]) : undefined;
const noSetpriv = setpriv !== undefined && (setpriv.error !== undefined || setpriv.status !== 0);
if (noSetpriv)
  console.warn("skipping the read-only SQLite tests: running as root without setpriv to drop");
const readerCommand = asRoot
  ? [
      "setpriv",
      "--bounding-set=-dac_override,-dac_read_search",
      "--inh-caps=-dac_override,-dac_read_search",
      process.execPath,
    ]
  : [process.execPath];

// The agent: a model call answered, then a tool call in flight when the process is killed
// (SIGKILL, or a clean close with `close`).
const agent = `
const { openStore, SessionRecorder } = await import(${JSON.stringify(core)});
const store = await openStore("sqlite:" + process.argv[1]);
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "shop" } });
await recorder.startRun();
const model = await recorder.beforeModelCall({ request: { prompt: "pay the invoice" } });
await recorder.modelCompleted(model, { toolCalls: ["pay"] });
await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 }, effect: { kind: "write", idempotent: false } });
if (process.argv[2] === "close") { await store.close(); process.exit(0); }
process.stdout.write("in-flight\\n");
setInterval(() => {}, 1000);
`;

// The reader: what inspection finds, then what an append is told.
const reader = `
const { openStore, inspectSession, SessionRecorder } = await import(${JSON.stringify(core)});
const out = {};
try {
  const store = await openStore("sqlite:" + process.argv[1], { create: false });
  const inspection = await inspectSession(store, "s");
  out.unresolved = inspection.unresolved.map((attempt) => attempt.name);
  try {
    await new SessionRecorder({ store, sessionId: "other", actor: { type: "human", id: "me" } }).startRun();
    out.appended = true;
  } catch (error) {
    out.appendError = { code: error.code, message: error.message };
  }
  await store.close();
} catch (error) {
  out.openError = { code: error.code, message: error.message };
}
process.stdout.write(JSON.stringify(out));
`;

async function runAgent(path: string, mode: "kill" | "close"): Promise<void> {
  if (mode === "kill") return runUntilKilled(agent, [path, mode], "in-flight");
  const result = spawnSync(process.execPath, ["--input-type=module", "-e", agent, path, mode], {
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`the agent exited ${result.status}: ${result.stderr}`);
}

/** Leaves the folder and everything in it readable only, until the test ends. */
function readOnly(folder: string): void {
  const files = readdirSync(folder);
  for (const file of files) chmodSync(join(folder, file), 0o444);
  chmodSync(folder, 0o555);
  onTestFinished(() => {
    chmodSync(folder, 0o755);
    for (const file of files) chmodSync(join(folder, file), 0o644);
  });
}

function runReader(path: string): Record<string, unknown> {
  const [command, ...args] = readerCommand as [string, ...string[]];
  const result: SpawnSyncReturns<string> = spawnSync(
    command,
    [...args, "--input-type=module", "-e", reader, path],
    { encoding: "utf8", timeout: 30_000 },
  );
  if (result.status !== 0) throw new Error(`reader exited ${result.status}: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

describe.skipIf(noSetpriv)("SQLite: a reader who may not write", () => {
  const root = scratchDirectory("agent-ledger-read-only-", { beforeAll, afterAll });
  // After the hook that makes it, registered above.
  beforeAll(() => chmodSync(root, 0o755));

  it("reads the ledger of a killed agent: the call in flight, and appends refused", async () => {
    const folder = join(root, "killed");
    const path = join(folder, "ledger.db");
    mkdirSync(folder);
    await runAgent(path, "kill");
    // The agent died with the ledger open: its -wal and -shm stay beside the file.
    expect(readdirSync(folder).sort()).toEqual(["ledger.db", "ledger.db-shm", "ledger.db-wal"]);
    readOnly(folder);

    const found = runReader(path);

    expect(found.unresolved).toEqual(["pay"]);
    expect(found.appendError).toMatchObject({ code: "store-unavailable" });
    expect((found.appendError as { message: string }).message).toMatch(/readonly/);
    expect(readdirSync(folder).sort()).toEqual(["ledger.db", "ledger.db-shm", "ledger.db-wal"]);
  });

  it("is told what to do with a ledger no process has open, and nothing is made", async () => {
    const folder = join(root, "closed");
    const path = join(folder, "ledger.db");
    mkdirSync(folder);
    await runAgent(path, "close");
    expect(readdirSync(folder)).toEqual(["ledger.db"]);
    readOnly(folder);

    const found = runReader(path);

    expect(found.openError).toMatchObject({ code: "store-unavailable" });
    const message = (found.openError as { message: string }).message;
    expect(message).toContain(`cannot read the SQLite database ${path} as this user`);
    expect(message).toContain(`${path}-shm`);
    expect(message).toContain(`may not create files in ${folder}`);
    expect(message).toContain("copy");
    expect(readdirSync(folder)).toEqual(["ledger.db"]);
  });
});
