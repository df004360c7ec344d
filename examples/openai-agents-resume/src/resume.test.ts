import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectSession, openStore } from "@agent-ledger/core";
import { describe, expect, test } from "vitest";

const main = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "main.js");

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
  const dir = mkdtempSync(join(tmpdir(), "oa-resume-"));
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
});
