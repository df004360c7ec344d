import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectSession, openStore, type SessionInspection, verifyRun } from "@agent-ledger/core";
import { runNodeChild } from "./child-process.js";

export interface Counts {
  /** Model calls actually made (paid for). */
  modelCalls: number;
  emailsSent: number;
  notesWritten: number;
}

export interface ScenarioResult {
  storeUrl: string;
  sessionId: string;
  runId: string;
  baseline: Counts;
  crashed: Counts;
  killedBy: NodeJS.Signals | null;
  atCrash: SessionInspection;
  final: SessionInspection;
  answer: unknown;
  chainOk: boolean;
  resumeLog: Record<string, unknown>[];
}

// Run the compiled agent even when this module is loaded from src/ by the test runner.
const agentScript = fileURLToPath(new URL("./agent-process.js", import.meta.url)).replace(
  /\/src\/agent-process\.js$/,
  "/dist/agent-process.js",
);

function lines(path: string): number {
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean).length : 0;
}

function count(workDir: string): Counts {
  return {
    modelCalls: lines(join(workDir, "model-bill.log")),
    emailsSent: lines(join(workDir, "outbox.log")),
    notesWritten: lines(join(workDir, "notes.log")),
  };
}

/**
 * The whole story of the demo: an uncrashed run for reference; then the same agent in a child
 * process, SIGKILLed while `write_note` is in flight; the ledger's account of the crash; a new
 * process that resumes the same run; and the counts of both.
 */
export async function runCrashScenario(options: {
  dir: string;
  sessionId?: string;
  /**
   * The store the crashed and the resumed process share (default: a SQLite file in `dir`); not
   * memory:, which is one per process. The reference run writes a SQLite file of its own.
   */
  storeUrl?: string;
}): Promise<ScenarioResult> {
  const { dir } = options;
  const storeUrl = options.storeUrl ?? `sqlite:${join(dir, "ledger.db")}`;
  const sessionId = options.sessionId ?? `demo-${Date.now()}`;
  const runId = "trip-planner-run";
  const baselineDir = join(dir, "baseline");
  const crashDir = join(dir, "crash");
  mkdirSync(baselineDir, { recursive: true });
  mkdirSync(crashDir, { recursive: true });

  const baseline = await runNodeChild(agentScript, [
    `sqlite:${join(dir, "baseline.db")}`,
    sessionId,
    runId,
    baselineDir,
    "fresh",
  ]);
  if (baseline.code !== 0)
    throw new Error(
      `the reference run failed: ${baseline.stderr || JSON.stringify(baseline.messages)}`,
    );

  const crash = await runNodeChild(
    agentScript,
    [storeUrl, sessionId, runId, crashDir, "fresh"],
    (message) => message.kind === "tool-started" && message.name === "write_note",
  );
  const store = await openStore(storeUrl);
  try {
    const atCrash = await inspectSession(store, sessionId);
    const resumed = await runNodeChild(agentScript, [
      storeUrl,
      sessionId,
      runId,
      crashDir,
      "resume",
    ]);
    if (resumed.code !== 0)
      throw new Error(
        `the resumed run failed: ${resumed.stderr || JSON.stringify(resumed.messages)}`,
      );
    const final = await inspectSession(store, sessionId);
    const chain = await verifyRun(store, { sessionId, runId });
    return {
      storeUrl,
      sessionId,
      runId,
      baseline: count(baselineDir),
      crashed: count(crashDir),
      killedBy: crash.signal,
      atCrash,
      final,
      answer: resumed.messages.find((message) => message.kind === "finished")?.answer,
      chainOk: chain.ok,
      resumeLog: resumed.messages,
    };
  } finally {
    await store.close();
  }
}
