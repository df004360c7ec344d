import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startViewer } from "@agent-ledger/cli";
import { inspectSession, openStore } from "@agent-ledger/core";
import { type StatusTreeRuns, scratchDirectory, statusTree } from "@agent-ledger/core/testing";
import { afterAll, describe, expect, test } from "vitest";

/** Every directory a test here makes is inside this one, removed when the file is done. */
const scratch = scratchDirectory("oa-resume-", afterAll);

const main = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "main.js");
/** The agent-ledger binary the on-call person runs. */
const cliBin = join(dirname(fileURLToPath(import.meta.resolve("@agent-ledger/cli"))), "bin.js");

function agentLedger(db: string, ...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cliBin, "--store", `sqlite:${db}`, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "" } },
      (error, stdout, stderr) => {
        if (error) process.stderr.write(stderr);
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout });
      },
    );
  });
}

interface Outcome {
  status: string;
  finalOutput: unknown;
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}

function start(args: string[], env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, [main, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

// Runs to the end and returns the JSON outcome printed on the last line.
function runToEnd(args: string[]): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = start(args);
    let out = "";
    let err = "";
    child.stdout?.on("data", (chunk) => {
      out += chunk;
    });
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`exit ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split("\n").at(-1) ?? "null") as Outcome);
    });
  });
}

// Starts a run, waits until it reports it is at `point`, then SIGKILLs it.
function killAt(args: string[], point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = start(args, { CRASH_AT: point });
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk) => {
      err += chunk;
    });
    child.stdout?.on("data", (chunk) => {
      out += chunk;
      if (out.includes(`CRASH_POINT ${point}`)) child.kill("SIGKILL");
    });
    child.on("close", (_code, signal) => {
      if (signal === "SIGKILL") resolve();
      else reject(new Error(`the run ended before ${point}: ${out} ${err}`));
    });
  });
}

function workspace() {
  const dir = mkdtempSync(join(scratch, "run-"));
  return { dir, db: join(dir, "ledger.db") };
}

async function unresolvedCount(db: string, sessionId: string): Promise<number> {
  const store = await openStore(`sqlite:${db}`);
  try {
    return (await inspectSession(store, sessionId)).unresolved.length;
  } finally {
    await store.close();
  }
}

describe("SIGKILL and resume in a new process", () => {
  // The uncrashed run every crashed+resumed run must equal.
  const baseline = (async () => {
    const { dir, db } = workspace();
    const outcome = await runToEnd(["run", db, dir, "s", "r"]);
    return {
      outcome,
      orders: lines(join(dir, "orders.log")),
      notified: lines(join(dir, "warehouse.log")),
      completedCalls: lines(join(dir, "model-calls.log")).filter((line) => line === "done").length,
      startedCalls: lines(join(dir, "model-calls.log")).filter((line) => line === "start").length,
    };
  })();

  const scenarios = [
    { name: "(a) inside a tool call", point: "tool", stream: false, extraStarts: 0 },
    {
      name: "(b) between a model response and its tool",
      point: "before-tool",
      stream: false,
      extraStarts: 0,
    },
    // The model call in flight at the kill is made again (model calls count as idempotent).
    { name: "(c) during a streamed response", point: "stream", stream: true, extraStarts: 1 },
  ];

  for (const scenario of scenarios) {
    test(scenario.name, async () => {
      const expected = await baseline;
      expect(expected.outcome).toEqual({
        status: "completed",
        finalOutput: "Receipt: order call_order placed: lamp for 42 EUR",
      });
      expect(expected.orders).toHaveLength(1);
      expect(expected.completedCalls).toBe(5);

      const { dir, db } = workspace();
      const args = ["run", db, dir, "s", "r", ...(scenario.stream ? ["stream"] : [])];
      await killAt(args, scenario.point);
      expect(await unresolvedCount(db, "s")).toBe(scenario.point === "before-tool" ? 0 : 1);

      const outcome = await runToEnd(["resume", db, dir, "s", "r"]);
      expect(outcome).toEqual(expected.outcome);
      expect(lines(join(dir, "orders.log"))).toEqual(expected.orders);
      // notify_warehouse returns nothing; it ran before the kill and is answered from the ledger.
      expect(expected.notified).toEqual(["lamp"]);
      expect(lines(join(dir, "warehouse.log"))).toEqual(expected.notified);
      const calls = lines(join(dir, "model-calls.log"));
      expect(calls.filter((line) => line === "done")).toHaveLength(expected.completedCalls);
      expect(calls.filter((line) => line === "start")).toHaveLength(
        expected.startedCalls + scenario.extraStarts,
      );
      expect(await unresolvedCount(db, "s")).toBe(0);
    });
  }

  for (const decision of ["approve", "abandon"] as const) {
    test(`(d) killed inside place_order, decided with agent-ledger resolve --${decision}`, async () => {
      const expected = await baseline;
      const { dir, db } = workspace();
      await killAt(["run", db, dir, "s", "r"], "tool");
      expect(lines(join(dir, "orders.log"))).toEqual([]);

      // The on-call person reads which call was in flight, on which run, with which arguments.
      const text = await agentLedger(db, "inspect", "s");
      expect(text.stdout).toContain("tool place_order [call_order]  !! UNRESOLVED");
      const { nextSteps: printed, ...inspection } = JSON.parse(
        (await agentLedger(db, "inspect", "s", "--json")).stdout,
      );
      expect(inspection.unresolved).toMatchObject([
        {
          kind: "tool",
          name: "place_order",
          toolCallId: "call_order",
          runId: "r",
          request: { args: { item: "lamp", price: 42 } },
        },
      ]);
      const store = await openStore(`sqlite:${db}`);
      const viewer = await startViewer({ store });
      try {
        const response = await fetch(new URL("/api/sessions/s", viewer.url));
        const { nextSteps, ...viewed } = (await response.json()) as Record<string, unknown>;
        // The viewer's run tree is the slimmer one its page draws: what it says of the calls in
        // flight is inspect's, word for word, and so is every run's and attempt's status.
        expect(viewed).toMatchObject({
          sessionId: inspection.sessionId,
          eventCount: inspection.eventCount,
          unresolved: inspection.unresolved,
        });
        expect(statusTree(viewed.runs as StatusTreeRuns)).toEqual(statusTree(inspection.runs));
        // And what to do next, as inspect prints it.
        expect(nextSteps).toEqual([
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" -- s ${inspection.unresolved[0].attemptId}`,
          },
        ]);
        // inspect --json gives it too, naming the store it was given.
        expect(printed).toEqual([
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- s ${inspection.unresolved[0].attemptId}`,
          },
        ]);
      } finally {
        await viewer.close();
        await store.close();
      }
      const reason = "the shop owner checked the order log";
      const { attemptId } = inspection.unresolved[0];
      const resolved = await agentLedger(db, "resolve", "s", attemptId, `--${decision}`, reason);
      expect(resolved.code).toBe(0);

      // The resume does what was decided, without asking again.
      const outcome = await runToEnd(["resume", db, dir, "s", "r", "decided"]);
      if (decision === "approve") {
        expect(outcome).toEqual(expected.outcome);
        expect(lines(join(dir, "orders.log"))).toEqual(expected.orders);
      } else {
        // Abandoned: no order, and the model is told the person's reason.
        expect(outcome).toEqual({ status: "completed", finalOutput: `Receipt: ${reason}` });
        expect(lines(join(dir, "orders.log"))).toEqual([]);
      }
      const calls = lines(join(dir, "model-calls.log"));
      expect(calls.filter((line) => line === "done")).toHaveLength(expected.completedCalls);
      expect(lines(join(dir, "warehouse.log"))).toEqual(expected.notified);
      expect(await unresolvedCount(db, "s")).toBe(0);
    });
  }
});
