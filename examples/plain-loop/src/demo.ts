// `npm run demo`: an agent is killed mid-call, the ledger says what was in flight, a new
// process resumes without paying twice. Runs offline on embedded SQLite, or on the store given
// with `npm run demo -- --store <url>` (PostgreSQL, MySQL/MariaDB, Redis).
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { renderInspection, shellQuote } from "@agent-ledger/cli";
import {
  type AttemptView,
  LedgerError,
  openStore,
  redactUrl,
  type StoreDescription,
} from "@agent-ledger/core";
import { type Counts, runCrashScenario } from "./scenario.js";

const USAGE = `usage: npm run demo [-- --store <url>]
  Runs an agent, SIGKILLs it inside a tool call, prints what the ledger says was in flight,
  resumes it in a new process, and compares what it paid for with a run that did not crash.
  --store  the store the crashed and the resumed process share: sqlite:<file>, postgres://,
           mysql:// or redis:// (default: a SQLite file in .demo)`;

const flags = parseFlags();
const dir = resolve(process.env.AGENT_LEDGER_DEMO_DIR ?? ".demo");
const storeUrl = flags.store ?? `sqlite:${join(dir, "ledger.db")}`;
// The default SQLite file's directory must exist to be opened. What an earlier run left there
// goes only once the store is known to work, and only that: the framework demos keep their
// ledgers beside it (.demo/langchain...), whose viewer commands they printed.
mkdirSync(dir, { recursive: true });
const described = await checkStore(storeUrl);
for (const name of [
  "baseline",
  "crash",
  ...sqliteFiles("baseline.db"),
  ...sqliteFiles("ledger.db"),
])
  rmSync(join(dir, name), { recursive: true, force: true });

/** A SQLite file's name and its companions' (WAL mode). */
function sqliteFiles(name: string): string[] {
  return [name, `${name}-wal`, `${name}-shm`];
}

/** The demo's options; --help, or an option it does not know, prints the usage (exit 0 or 2). */
function parseFlags(): { store?: string } {
  try {
    const { values } = parseArgs({
      options: { store: { type: "string" }, help: { type: "boolean", short: "h" } },
    });
    if (values.help) {
      console.log(USAGE);
      process.exit(0);
    }
    return values.store === undefined ? {} : { store: values.store };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

/**
 * The store's own description; refuses (exit 2) a store the demo cannot use, before any
 * process runs.
 */
async function checkStore(url: string): Promise<StoreDescription> {
  const refuse = (reason: string): never => {
    console.error(`npm run demo -- --store <url>: ${reason}`);
    process.exit(2);
  };
  // Each process would open a memory store of its own: the resume would find nothing.
  if (url.startsWith("memory:"))
    refuse(
      "the crashed and the resumed process must share the store; memory: is one per process (use sqlite:<file>, postgres://, mysql:// or redis://)",
    );
  try {
    const store = await openStore(url);
    try {
      // Reaches the server and makes the ledger's tables (or keys) if they are not there yet.
      await store.init();
      return store.describe();
    } finally {
      await store.close();
    }
  } catch (error) {
    // A LedgerError's message shows the URL redacted.
    return refuse(
      LedgerError.isInstance(error) ? error.message : `cannot use ${redactUrl(url)}: ${error}`,
    );
  }
}

const time = (iso: string) => iso.slice(11, 23);

function describeUnresolved(attempt: AttemptView): string {
  const effect = attempt.effect as { kind?: string; idempotent?: boolean } | undefined;
  const what =
    attempt.kind === "tool"
      ? `tool call ${attempt.name} (${attempt.toolCallId})`
      : `model call ${attempt.name ?? ""}`;
  const args =
    attempt.kind === "tool" ? JSON.stringify((attempt.request as { args?: unknown }).args) : "";
  const verdict = effect?.idempotent
    ? "It declared idempotent: true, so resuming will run it again."
    : "It is not idempotent: resuming will stop and ask a person to check it, then approve or abandon it.";
  return `  - ${what} ${args}\n    requested at ${time(attempt.requestedAt)} (run ${attempt.runId}, seq ${attempt.requestSeq}) and never finished: the process died while it was in flight.\n    ${verdict}`;
}

/** `1 call`, `4 calls`. */
const counted = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

const row = (label: string, counts: Counts) =>
  `  ${label.padEnd(24)} model calls ${String(counts.modelCalls).padStart(2)}   emails sent ${String(counts.emailsSent).padStart(2)}   notes written ${String(counts.notesWritten).padStart(2)}`;

console.log(
  `agent-ledger demo: a trip-planner agent records every model and tool call to a ${described.kind} store.\n`,
);
console.log(
  "1. Reference run (no crash) ... and the same agent in a child process, killed with SIGKILL inside write_note.",
);
const result = await runCrashScenario({ dir, storeUrl });
// As the CLI names a store: a password in the URL shown as ***, quoted for a shell.
const shownStore = shellQuote(redactUrl(result.storeUrl));
console.log(`   child process ended by ${result.killedBy ?? "exit (the kill came too late)"}\n`);

console.log("2. What the ledger says right after the crash:");
const completed = result.atCrash.runs
  .flatMap((run) => run.steps.flatMap((step) => step.attempts))
  .filter((attempt) => attempt.status === "completed");
console.log(
  `   ${counted(completed.length, "call")} finished before the crash: ${completed.map((attempt) => attempt.name ?? attempt.kind).join(", ")}`,
);
console.log(
  `   ${counted(result.atCrash.unresolved.length, "call")} went out and never came back:`,
);
for (const attempt of result.atCrash.unresolved) console.log(describeUnresolved(attempt));

console.log("\n3. A new process resumes the same run from its input:");
const replayedModels = result.resumeLog.filter(
  (message) => message.kind === "model-replayed",
).length;
const replayedTools = result.resumeLog
  .filter((message) => message.kind === "tool-replayed")
  .map((message) => message.name);
const retried = result.resumeLog
  .filter((message) => message.kind === "tool-retried")
  .map((message) => message.name);
console.log(
  `   ${counted(replayedModels, "model call")} answered from the ledger (not paid again); tools answered from the ledger: ${replayedTools.join(", ") || "none"}`,
);
console.log(`   retried because idempotent: ${retried.join(", ") || "none"}`);
console.log(
  `   final answer: ${JSON.stringify(result.answer)}; hash chain verified: ${result.chainOk}\n`,
);

console.log("4. Counts, crashed + resumed against a run with no crash:");
console.log(row("no crash", result.baseline));
console.log(row("crashed, then resumed", result.crashed));
const equal = JSON.stringify(result.baseline) === JSON.stringify(result.crashed);
console.log(
  equal
    ? "   equal: nothing was paid for twice, no side effect was repeated or lost.\n"
    : "   NOT EQUAL: the resume repeated or lost work.\n",
);

console.log(`5. npm run agent-ledger -- inspect ${result.sessionId} --store ${shownStore}\n`);
console.log(renderInspection(result.final));
console.log(
  `\nOpen the viewer on this session:\n  npm run agent-ledger -- serve --session ${result.sessionId} --store ${shownStore}\n`,
);
console.log(`(files: ${join(dir, "crash")}, ledger ${shownStore})`);
// On a store of the user's own, the session stays: say how to remove it.
if (flags.store !== undefined)
  console.log(
    `(to remove the demo's session from that store: npm run agent-ledger -- delete ${result.sessionId} --yes --store ${shownStore})`,
  );
if (redactUrl(result.storeUrl) !== result.storeUrl)
  console.log("(the store URL's password is shown as ***: put it back to run these commands)");
if (!equal || result.killedBy !== "SIGKILL") process.exitCode = 1;
