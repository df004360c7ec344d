import { join } from "node:path";
import { verifyRun } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { childLines, compiledBeside, scratchDirectory } from "@agent-ledger/core/testing";
import type { BaseMessage } from "@langchain/core/messages";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { RUN, SESSION } from "./testing/zombie-thread.test.data.js";
import { threadRunId } from "./thread-log.js";

const dir = scratchDirectory("agent-ledger-zombie-thread-", afterAll);
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

describe("a worker taken for dead comes back after another process resumed its thread", () => {
  it("its checkpoint is refused, and the thread goes on from the other's", async () => {
    const path = join(dir, "zombie.db");
    let paused: () => void = () => {};
    const isPaused = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const zombie = agentProcess([path, "fresh"], (line) => {
      if (line.paused) paused();
    });
    await isPaused;
    zombie.child.kill("SIGSTOP");

    const resumed = await agentProcess([path, "resume"]).exited;
    expect(resumed.lines.at(-1), resumed.stderr).toEqual({ finished: "final" });
    expect(effects(resumed.lines)).toEqual(["model 1", "write c1", "model 2"]);
    const winner = await latestCheckpoint(path);
    expect(winner).toMatchObject({ last: "final", count: 6 });

    zombie.child.kill("SIGCONT");
    const late = await zombie.exited;
    // It ran c0 and then lost the run: no model call, no tool after that.
    expect(effects(late.lines)).toEqual(["model 0", "write c0"]);
    expect(late.lines.at(-1)?.error).toMatchObject({ code: "conflict" });
    // Saved, its checkpoint (the newest id) would be the thread's latest: the next invocation
    // would go on from the state the zombie had, without the other's calls and answer.
    expect(await latestCheckpoint(path)).toEqual(winner);
  });
});
