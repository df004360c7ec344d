import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectSession, openStore } from "@agent-ledger/core";
import { beforeAll, describe, expect, it } from "vitest";
import { FINAL_TEXT } from "./scripted-model.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const main = join(root, "dist", "main.js");

interface Outcome {
  result?: { text: string; steps: number };
  error?: { code?: string; message: string };
  killed: boolean;
}

/** Runs the agent in a child process; with `killOn`, SIGKILLs it when it prints that line. */
function child(args: string[], killOn?: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const process = spawn("node", [main, ...args], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    let killed = false;
    process.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (killOn && !killed && out.includes(`${killOn}\n`)) {
        killed = true;
        process.kill("SIGKILL");
      }
    });
    process.on("error", reject);
    process.on("close", () => {
      const line = (prefix: string) =>
        out
          .split("\n")
          .find((item) => item.startsWith(`${prefix} `))
          ?.slice(prefix.length + 1);
      const result = line("RESULT");
      const error = line("ERROR");
      resolve({
        killed,
        ...(result ? { result: JSON.parse(result) } : {}),
        ...(error ? { error: JSON.parse(error) } : {}),
      });
    });
  });
}

function scenario(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `ai-sdk-agent-${name}-`));
  const files = {
    db: join(dir, "ledger.db"),
    calls: join(dir, "model-calls.log"),
    effects: join(dir, "effects.log"),
  };
  const lines = (file: string) =>
    existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
  return {
    files,
    args: (mode: string, start: string, crashAt?: string) => [
      files.db,
      "run-1",
      mode,
      start,
      files.calls,
      files.effects,
      ...(crashAt ? [crashAt] : []),
    ],
    counts: () => {
      const calls = lines(files.calls);
      return {
        started: calls.filter((line) => line.startsWith("start")).length,
        finished: calls.filter((line) => line.startsWith("finish")).length,
        effects: lines(files.effects),
      };
    },
  };
}

async function unresolvedNames(db: string): Promise<string[]> {
  const store = await openStore(`sqlite:${db}`);
  try {
    const inspection = await inspectSession(store, "order-42");
    return inspection.unresolved.map((attempt) => attempt.name ?? attempt.kind);
  } finally {
    await store.close();
  }
}

beforeAll(() => {
  // The child processes run the compiled example: npm test builds it (tsc -b) before vitest.
  // Building here would race the other test files reading dist/.
  if (!existsSync(join(root, "dist", "main.js"))) throw new Error("build first: npm run build");
}, 120_000);

describe("ai-sdk-agent example: SIGKILL and resume", () => {
  it.each(["generate", "stream"] as const)("an uncrashed %s run", async (mode) => {
    const run = scenario(`clean-${mode}`);
    const outcome = await child(run.args(mode, "new"));
    expect(outcome.result).toEqual({ text: FINAL_TEXT, steps: 3 });
    expect(run.counts()).toEqual({
      started: 3,
      finished: 3,
      effects: ["lookupOrder 42", "sendEmail ada@example.com Order 42 shipped"],
    });
  });

  it("generateText killed inside an idempotent tool resumes to the uncrashed result", async () => {
    const clean = scenario("baseline-generate");
    const baseline = await child(clean.args("generate", "new"));
    const run = scenario("tool-crash");
    const crashed = await child(run.args("generate", "new", "tool:lookupOrder"), "IN_TOOL");
    expect(crashed.killed).toBe(true);
    expect(await unresolvedNames(run.files.db)).toEqual(["lookupOrder"]);
    const resumed = await child(run.args("generate", "resume"));
    expect(resumed.result).toEqual(baseline.result);
    expect(run.counts()).toEqual(clean.counts());
    expect(await unresolvedNames(run.files.db)).toEqual([]);
  });

  it("streamText killed mid-stream resumes: recorded calls replayed, the cut call redone once", async () => {
    const clean = scenario("baseline-stream");
    const baseline = await child(clean.args("stream", "new"));
    const run = scenario("stream-crash");
    const crashed = await child(run.args("stream", "new", "stream"), "IN_STREAM");
    expect(crashed.killed).toBe(true);
    expect(run.counts().finished).toBe(2);
    const resumed = await child(run.args("stream", "resume"));
    expect(resumed.result).toEqual(baseline.result);
    const counts = run.counts();
    const expected = clean.counts();
    expect(counts.effects).toEqual(expected.effects);
    expect(counts.finished).toBe(expected.finished);
    // The call cut by the crash never delivered its answer: it is the only one made twice.
    expect(counts.started).toBe(expected.started + 1);
  });

  it("a run killed inside a non-idempotent tool stops with unresolved-attempt instead of repeating it", async () => {
    const run = scenario("email-crash");
    const crashed = await child(run.args("generate", "new", "tool:sendEmail"), "IN_TOOL");
    expect(crashed.killed).toBe(true);
    const resumed = await child(run.args("generate", "resume"));
    expect(resumed.error?.code).toBe("unresolved-attempt");
    const counts = run.counts();
    expect(counts.effects).toEqual(["lookupOrder 42"]);
    expect(counts.started).toBe(2);
    expect(await unresolvedNames(run.files.db)).toEqual(["sendEmail"]);
  });
});
