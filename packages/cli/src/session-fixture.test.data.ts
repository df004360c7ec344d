import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type EventStore, openStore, SessionRecorder, type ToolEffect } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { onTestFinished } from "vitest";
import { runsInProcess } from "./cli-in-process.test.data.js";
import { type CliResult, runCliInProcess } from "./testing/cli-in-process.js";

/** The built binary the tests run, exactly as a user would. */
export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export type { CliResult };

/**
 * Runs `agent-ledger ...args` and collects its output and exit code: in this process where it
 * can be (see `runsInProcess`), else as `node dist/bin.js` (`spawnBin`). A variable of `env` set
 * to undefined is unset; `cwd` is where it runs (this process's directory by default).
 */
export function runBin(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { cwd?: string } = {},
): Promise<CliResult> {
  return runsInProcess(env, options.cwd)
    ? runCliInProcess(args, env)
    : spawnBin(args, env, options);
}

/** Runs `node dist/bin.js ...args`, a process of its own, as `runBin` does. */
export function spawnBin(
  args: string[],
  env: Record<string, string | undefined> = {},
  options: { cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "", ...env }, timeout: 30_000, ...options },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Runs a printed `agent-ledger ...` command line as a person pasting it would: through bash
 * (its quoting and all), with `agent-ledger` standing for the built binary.
 */
export function runPasted(command: string, env: Record<string, string> = {}): Promise<CliResult> {
  const line = command.replace(/^agent-ledger /, `"${process.execPath}" "${BIN}" `);
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", line],
      {
        env: { ...process.env, AGENT_LEDGER_STORE: "", LC_ALL: "C.UTF-8", ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/**
 * Starts `node dist/bin.js ...args` and resolves once stdout matches `ready`. `env` as for
 * runBin: on top of this process's, without its AGENT_LEDGER_STORE.
 */
export function startBin(
  args: string[],
  ready: RegExp,
  env: Record<string, string> = {},
): Promise<{
  child: ReturnType<typeof spawn>;
  match: RegExpMatchArray;
  output: () => string;
  errors: () => string;
}> {
  const child = spawn(process.execPath, [BIN, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, AGENT_LEDGER_STORE: "", ...env },
  });
  let stdout = "";
  let stderr = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${ready}: ${stdout}${stderr}`)),
      20_000,
    );
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = stdout.match(ready);
      if (match) {
        clearTimeout(timer);
        resolve({ child, match, output: () => stdout, errors: () => stderr });
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready: ${stdout}${stderr}`));
    });
  });
}

export const INJECTION =
  '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"><b id="bold">bold?</b>';

export interface DemoSession {
  sessionId: string;
  rootRunId: string;
  childRunId: string;
  unresolvedAttemptId: string;
  recorder: SessionRecorder;
}

/**
 * A session as an agent that crashed leaves it: a planner that called a model and two tools,
 * one of which handed off to a child run (whose model call failed), the other (a write) still
 * unresolved; its input carries HTML, and an evidence record points at a blob.
 */
export async function recordDemoSession(
  store: EventStore,
  sessionId: string,
): Promise<DemoSession> {
  const recorder = new SessionRecorder({
    store,
    sessionId,
    actor: { type: "agent", id: "planner", framework: "ai-sdk" },
  });
  await recorder.startRun({ version: "1.0.0" });
  await recorder.recordInput(`Book a table for two. ${INJECTION}`);
  const model = await recorder.beforeModelCall({
    request: {
      modelId: "gpt-4o-mini",
      provider: "openai.chat",
      prompt: [{ role: "user", content: [{ type: "text", text: "Book a table for two." }] }],
    },
  });
  await recorder.modelCompleted(model, {
    content: [
      { type: "text", text: "Checking availability." },
      { type: "tool-call", toolCallId: "call-1", toolName: "find_slots", input: '{"people":2}' },
      {
        type: "tool-call",
        toolCallId: "call-2",
        toolName: "book_table",
        input: '{"slot":"20:00"}',
      },
    ],
    finishReason: "tool-calls",
    usage: { inputTokens: 42, outputTokens: 17 },
  });
  const find = await recorder.beforeToolCall({
    toolCallId: "call-1",
    name: "find_slots",
    args: { people: 2 },
    effect: { kind: "read", idempotent: true },
  });
  const child = recorder.child({
    actor: { type: "agent", id: "availability-checker" },
    causedByEventId: find.requestedEventId,
  });
  await child.startRun();
  const childModel = await child.beforeModelCall({
    request: { model: "small-model", messages: [{ role: "user", content: "slots?" }] },
  });
  await child.modelFailed(childModel, new Error("upstream 503"));
  await child.failRun(new Error("no answer"));
  await recorder.toolCompleted(find, ["20:00", "21:30"]);
  const book = await recorder.beforeToolCall({
    toolCallId: "call-2",
    name: "book_table",
    args: { slot: "20:00" },
    effect: { kind: "write", idempotent: false },
  });
  const ref = await store.putBlob("menu.txt: soup <b>of the day</b>");
  await recorder.recordEvidence({ classification: "menu", summary: "menu", evidenceRefs: [ref] });
  return {
    sessionId,
    rootRunId: recorder.runId,
    childRunId: child.runId,
    unresolvedAttemptId: book.attemptId,
    recorder,
  };
}

/**
 * An agent used as a tool (`writer_tool` on run "main") whose own write is still in flight in
 * its child run "writer": two unresolved attempts, of which only the inner one is a decision.
 * `outerEffect`: what the agent tool call declares (by default nothing: unknown, not idempotent).
 */
export async function recordNestedInFlight(
  store: EventStore,
  sessionId: string,
  options: { outerEffect?: ToolEffect } = {},
) {
  const main = new SessionRecorder({
    store,
    sessionId,
    runId: "main",
    actor: { type: "agent", id: "main" },
  });
  await main.startRun();
  const outer = await main.beforeToolCall({
    toolCallId: "c-w",
    name: "writer_tool",
    args: {},
    ...(options.outerEffect ? { effect: options.outerEffect } : {}),
  });
  const writer = main.child({
    runId: "writer",
    actor: { type: "agent", id: "writer" },
    causedByEventId: outer.requestedEventId,
  });
  await writer.startRun();
  const inner = await writer.beforeToolCall({
    toolCallId: "c-write",
    name: "write",
    args: {},
    effect: { kind: "write", idempotent: false },
  });
  return { outer, inner };
}

/**
 * What an adapter records when its run pauses at an approval inside an agent used as a tool
 * (in session `sessionId`): the agent call stays open, its child run made a model call, and the run's
 * checkpoint names the call to decide (`awaitingDecision`), here with how the app decides it.
 */
export async function pausedInsideAgentCall(store: EventStore, sessionId = "paused") {
  const main = new SessionRecorder({
    store,
    sessionId,
    runId: "main",
    actor: { type: "agent", id: "Outer" },
  });
  await main.startRun();
  const outer = await main.beforeToolCall({
    toolCallId: "c_outer",
    name: "inner",
    args: { input: "charge 5" },
    effect: { kind: "none", idempotent: true },
  });
  const inner = main.child({
    runId: "inner-run",
    actor: { type: "agent", id: "Inner" },
    causedByEventId: outer.requestedEventId,
  });
  await inner.startRun();
  const model = await inner.beforeModelCall({ request: { model: "m", input: "charge 5" } });
  await inner.modelCompleted(model, { toolCalls: [{ id: "c_inner", name: "charge2" }] });
  await main.checkpoint({
    state: "opaque to the ledger",
    awaitingDecision: {
      calls: [{ name: "charge2", toolCallId: "c_inner", args: { amount: 5 }, agent: "Inner" }],
      decideWith: "the app's approval screen",
    },
  });
  return { main, inner, outer };
}

/**
 * What @agent-ledger/openai-agents records when a run whose process died inside the tool call
 * `pay` (not idempotent) is resumed without a decision: the call stays in flight, and the run
 * pauses asking about it as an approval, its checkpoint naming the attempt in flight
 * (`inFlightAttemptId`). `alsoAsked`: an ordinary approval (`refund`, never requested) the same
 * pause asks about beside it.
 */
export async function pausedAtCallInFlight(
  store: EventStore,
  sessionId = "crashed",
  options: { alsoAsked?: boolean } = {},
) {
  const main = new SessionRecorder({
    store,
    sessionId,
    runId: "main",
    actor: { type: "agent", id: "shop" },
  });
  await main.startRun();
  const pay = await main.beforeToolCall({
    toolCallId: "c_pay",
    name: "pay",
    args: { amount: 5 },
    effect: { kind: "unknown", idempotent: false },
  });
  const calls = [
    {
      name: "pay",
      toolCallId: "c_pay",
      args: { amount: 5 },
      agent: "shop",
      inFlightAttemptId: pay.attemptId,
    },
    ...(options.alsoAsked
      ? [{ name: "refund", toolCallId: "c_refund", args: { amount: 2 }, agent: "shop" }]
      : []),
  ];
  await main.checkpoint({
    state: "opaque to the ledger",
    awaitingDecision: { calls, decideWith: "the app's approval screen" },
  });
  return { main, pay };
}

/**
 * As pausedAtCallInFlight, but the call in flight at the crash is an agent used as a tool
 * (`pay_agent`, in session `sessionId`), whose child run "payer" was charging when the process
 * died.
 */
export async function pausedAtAgentCallInFlight(store: EventStore, sessionId: string) {
  const main = new SessionRecorder({
    store,
    sessionId,
    runId: "main",
    actor: { type: "agent", id: "shop" },
  });
  await main.startRun();
  const pay = await main.beforeToolCall({ toolCallId: "c_pay", name: "pay_agent", args: {} });
  const payer = main.child({
    runId: "payer",
    actor: { type: "agent", id: "payer" },
    causedByEventId: pay.requestedEventId,
  });
  await payer.startRun();
  const charge = await payer.beforeToolCall({
    toolCallId: "c_charge",
    name: "charge",
    args: { amount: 5 },
    effect: { kind: "write", idempotent: false },
  });
  await main.checkpoint({
    state: "opaque to the ledger",
    awaitingDecision: {
      calls: [
        { name: "pay_agent", toolCallId: "c_pay", args: {}, inFlightAttemptId: pay.attemptId },
      ],
    },
  });
  return { pay, charge };
}

/**
 * The ledger at `url` (a new SQLite file when none is given), with a `pay` call in flight in
 * session "pay", the store closed again: what inspect and resolve are run on.
 */
export async function storeWithPay(
  url = `sqlite:${join(scratchDirectory("agent-ledger-pay-", onTestFinished), "ledger.db")}`,
): Promise<{ url: string; attemptId: string }> {
  const store = await openStore(url);
  const recorder = new SessionRecorder({
    store,
    sessionId: "pay",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
  await store.close();
  return { url, attemptId: call.attemptId };
}

/**
 * A SQLite ledger at `path` holding session "gap": run "main" paid with a tool call, then
 * completed, its seq 2 (the payment's outcome) deleted by hand. The warning `inspect` and
 * `export` print of it is returned.
 */
export async function recordGapSession(path: string): Promise<string> {
  const store = await openStore(`sqlite:${path}`);
  const recorder = new SessionRecorder({
    store,
    sessionId: "gap",
    runId: "main",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
  await recorder.toolCompleted(call, { paid: true });
  await recorder.completeRun("done");
  await store.close();
  const database = new Database(path);
  const deleted = database.prepare("DELETE FROM events WHERE seq = 2").run().changes;
  database.close();
  if (deleted !== 1) throw new Error(`deleted ${deleted} rows, not 1`);
  return `run main is not intact (seq 2 is missing): run agent-ledger verify --store sqlite:${path} gap`;
}
