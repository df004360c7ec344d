import { join } from "node:path";
import { verifyRun } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { childLines, compiledBeside, scratchDirectory } from "@agent-ledger/core/testing";
import type { BaseMessage } from "@langchain/core/messages";
import type { CompiledStateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { RUN, SESSION, zombieAgent } from "./testing/zombie-thread.test.data.js";
import { threadRunId } from "./thread-run-id.js";

const dir = scratchDirectory("agent-ledger-zombie-thread-", { beforeAll, afterAll });
const CHILD = compiledBeside("./testing/zombie-thread.test.child.js", import.meta.url);

interface Line {
  effect?: string;
  paused?: true;
  finished?: string;
  error?: { code?: string; name: string; message: string };
}

/** The agent in a child process; `heard` hears each line it prints. */
const agentProcess = (args: string[], heard?: (line: Line) => void) =>
  childLines<Line>([CHILD, ...args], heard);

const effects = (lines: Line[]) => lines.flatMap((line) => (line.effect ? [line.effect] : []));

/** The thread's latest checkpoint, as the next invocation would go on from it. */
async function latestCheckpoint(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    const tuple = await new LedgerCheckpointSaver({ store }).getTuple({
      configurable: { thread_id: "thread-1" },
    });
    const messages = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
    for (const runId of [RUN, threadRunId("thread-1")]) {
      const session = runId === RUN ? SESSION : "langgraph-checkpoints";
      expect(await verifyRun(store, { sessionId: session, runId })).toMatchObject({ ok: true });
    }
    return { id: tuple?.checkpoint.id, last: messages.at(-1)?.content, count: messages.length };
  } finally {
    await store.close();
  }
}

/**
 * A worker (`mode`: where it pauses) taken for dead: stopped (SIGSTOP) at its pause, while
 * another process resumes the thread and finishes it; then it comes back (SIGCONT). Resolves
 * with the thread's latest checkpoint after the winner, and what the late worker printed.
 */
async function zombieComesBack(path: string, mode: "fresh" | "fresh-mid-tool") {
  let paused: () => void = () => {};
  const isPaused = new Promise<void>((resolve) => {
    paused = resolve;
  });
  const zombie = agentProcess([path, mode], (line) => {
    if (line.paused) paused();
  });
  await isPaused;
  zombie.child.kill("SIGSTOP");

  const resumed = await agentProcess([path, "resume"]).exited;
  expect(resumed.lines.at(-1), resumed.stderr).toEqual({ finished: "final" });
  // Mid tool, the zombie's call was in flight: the other runs it again (it is idempotent).
  const again = mode === "fresh-mid-tool" ? ["write c0"] : [];
  expect(effects(resumed.lines)).toEqual([...again, "model 1", "write c1", "model 2"]);
  const winner = await latestCheckpoint(path);
  expect(winner).toMatchObject({ last: "final", count: 6 });

  zombie.child.kill("SIGCONT");
  return { winner, late: await zombie.exited };
}

/** The thread's history as LangGraph gives it (getStateHistory): each step's tasks and errors. */
async function history(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    // The compiled agent's type does not give getStateHistory (its state type is too deep).
    const { agent } = zombieAgent(store) as unknown as {
      agent: Pick<CompiledStateGraph<unknown, unknown>, "getStateHistory">;
    };
    const steps: { step: unknown; tasks: { name: string; error?: string }[] }[] = [];
    for await (const snapshot of agent.getStateHistory({
      configurable: { thread_id: "thread-1" },
    }))
      steps.push({
        step: snapshot.metadata?.step,
        tasks: snapshot.tasks.map((task) => ({
          name: task.name,
          ...(task.error !== undefined ? { error: String((task.error as Error).message) } : {}),
        })),
      });
    return steps;
  } finally {
    await store.close();
  }
}

describe("a worker taken for dead comes back after another process resumed its thread", () => {
  it("its checkpoint is refused, and the thread goes on from the other's", async () => {
    const path = join(dir, "zombie.db");
    const { winner, late } = await zombieComesBack(path, "fresh");
    // It ran c0 and then lost the run: no model call, no tool after that.
    expect(effects(late.lines)).toEqual(["model 0", "write c0"]);
    expect(late.lines.at(-1)?.error).toMatchObject({ code: "conflict" });
    // Saved, its checkpoint (the newest id) would be the thread's latest: the next invocation
    // would go on from the state the zombie had, without the other's calls and answer.
    expect(await latestCheckpoint(path)).toEqual(winner);
  });

  it("back mid tool step, its task's error writes are refused too: the history shows no error for the step the other finished", async () => {
    const path = join(dir, "zombie-mid-tool.db");
    const { winner, late } = await zombieComesBack(path, "fresh-mid-tool");
    // Its tool ran (an idempotent call, run again by the other too), then its recorder lost the run.
    expect(effects(late.lines)).toEqual(["model 0", "write c0"]);
    expect(late.lines.at(-1)?.error).toMatchObject({ code: "conflict" });
    expect(await latestCheckpoint(path)).toEqual(winner);
    // Saved on the checkpoint both went on from, its task's __error__ write (the conflict) would
    // be that step's tools task's error in getState / getStateHistory, beside the other's result.
    const steps = await history(path);
    expect(steps.flatMap((step) => step.tasks.filter((task) => task.error))).toEqual([]);
    expect(steps.find((step) => step.step === 1)?.tasks).toEqual([{ name: "tools" }]);
  });
});
