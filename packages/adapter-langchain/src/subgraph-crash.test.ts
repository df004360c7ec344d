import { join } from "node:path";
import {
  type AttemptView,
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { compiledBeside, killAtMarker, scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ChildEffects, CRASH } from "./testing/crash-point.js";
import { openLedger } from "./testing/crashing-agent.test.data.js";
import { threadConfig } from "./testing/helpers.js";
import {
  RUN,
  SESSION,
  type SubgraphMode,
  supervisorGraph,
  THREAD,
} from "./testing/subgraph.test.data.js";

const scratch = scratchDirectory("langchain-subgraph-", { beforeAll, afterAll });
// Compiled beside this file's compiled copy: build (`tsc -b`) after changing the adapter.
const CHILD = compiledBeside("./testing/subgraph.test.child.js", import.meta.url);
const address = { sessionId: SESSION, runId: RUN };

/** Every effect the graph has (emails sent, model calls paid), counted over both processes. */
const EFFECTS = [
  "router 0",
  "router 1",
  "router 2",
  "researcher 1",
  "researcher 2",
  "send 1",
  "send 2",
];

/**
 * Kills (SIGKILL) a child process running the supervisor inside `crashIn`, then resumes the
 * thread in this process as a new one does: the same runId and thread, `invoke(null)`.
 */
async function crashAndResume(
  name: string,
  args: { mode: SubgraphMode; crashIn: string; flat?: boolean },
  onTestFinished: TestContext["onTestFinished"],
) {
  const path = join(scratch, `${name}.db`);
  const flat = args.flat ? ["flat"] : [];
  const { stdout } = await killAtMarker([CHILD, path, args.mode, args.crashIn, ...flat], CRASH);
  const child = new ChildEffects(stdout);
  const store = await openLedger(path, onTestFinished);
  const paid = new Map<string, number>();
  const resume = () => {
    const handler = new LedgerCallbackHandler({ store, ...address });
    const graph = supervisorGraph({
      mode: args.mode,
      checkpointer: new LedgerCheckpointSaver({ store }),
      effect: (what) => paid.set(what, (paid.get(what) ?? 0) + 1),
    });
    return { handler, invoke: () => graph.invoke(null, threadConfig(handler, THREAD)) };
  };
  /** How many times each effect happened, in the crashed process and this one. */
  const counts = () =>
    Object.fromEntries(EFFECTS.map((what) => [what, child.count(what) + (paid.get(what) ?? 0)]));
  /**
   * Resumes, which must stop with `unresolved-attempt` on `inFlight`; then a person approves
   * it (the email was not sent), recorded in the run that holds it.
   */
  const stopThenApprove = async (inFlight: AttemptView | undefined) => {
    const stopped = await resume()
      .invoke()
      .catch((error: unknown) => error);
    expect(findLedgerError(stopped, "unresolved-attempt")?.details).toMatchObject({
      attemptId: inFlight?.attemptId,
    });
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: inFlight?.runId ?? "",
      actor: { type: "human", id: "ops" },
    });
    await person.approve(inFlight as AttemptView, "the email was not sent");
  };
  return { store, resume, counts, stopThenApprove };
}

/** Each model call paid once, each email sent once, over both processes (the researcher's 3). */
const EACH_ONCE = Object.fromEntries(
  EFFECTS.map((what) => [what, what.startsWith("researcher") ? 3 : 1]),
);

/** The run that holds `runId`'s attempt, and that run's parent. */
async function runOf(store: EventStore, runId: string) {
  const { runs } = await inspectSession(store, SESSION);
  const all = runs.flatMap(function flat(run): (typeof runs)[number][] {
    return [run, ...run.children.flatMap(flat)];
  });
  return all.find((run) => run.runId === runId);
}

describe("a crash inside a LangGraph subgraph (child run), resumed in a new process", () => {
  for (const mode of ["node", "function"] as const) {
    it(`stops on the email in flight, named in the subgraph's child run, and pays nothing twice once approved (${mode})`, async ({
      onTestFinished,
    }) => {
      const { store, resume, counts, stopThenApprove } = await crashAndResume(
        `send-${mode}`,
        { mode, crashIn: "send_email 2" },
        onTestFinished,
      );
      const [inFlight, ...others] = (await inspectSession(store, SESSION)).unresolved;
      expect(others).toEqual([]);
      expect(inFlight).toMatchObject({ kind: "tool", name: "send_email", toolCallId: "send-2" });
      const holder = await runOf(store, inFlight?.runId ?? "");
      expect(holder?.parentRunId).toBe(RUN);
      expect(holder?.runId).not.toBe(RUN);

      await stopThenApprove(inFlight);
      const { handler, invoke } = resume();
      const result = await invoke();
      expect(result.messages.at(-1)?.content).toBe("finished");
      await handler.completeRun("done");
      // Each model call paid once, each email sent once: the loop's second child run resumed.
      expect(counts()).toEqual(EACH_ONCE);
      const { runs, unresolved } = await inspectSession(store, SESSION);
      expect(unresolved).toEqual([]);
      const root = runs.find((run) => run.runId === RUN);
      expect(root?.children.map((run) => [run.status, run.steps.length])).toEqual([
        ["completed", 5],
        ["completed", 5],
      ]);
    });
  }

  it("runs the idempotent lookup in flight again, as a retry in the subgraph's child run", async ({
    onTestFinished,
  }) => {
    const { store, resume, counts } = await crashAndResume(
      "lookup",
      { mode: "function", crashIn: "lookup 2" },
      onTestFinished,
    );
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    expect(inFlight).toMatchObject({ name: "lookup", toolCallId: "lookup-2" });
    const { handler, invoke } = resume();
    expect((await invoke()).messages.at(-1)?.content).toBe("finished");
    await handler.completeRun("done");
    expect(counts()).toEqual(EACH_ONCE);
    const holder = await runOf(store, inFlight?.runId ?? "");
    const lookup = holder?.steps.find((step) => step.attempts[0]?.name === "lookup");
    expect(lookup?.attempts.map((attempt) => attempt.status)).toEqual(["requested", "completed"]);
  });

  for (const mode of ["node", "function"] as const) {
    it(`asks the subgraph's model call in flight again, as a retry in its child run, paid once more and nothing else twice (${mode})`, async ({
      onTestFinished,
    }) => {
      const { store, resume, counts } = await crashAndResume(
        `model-${mode}`,
        { mode, crashIn: "researcher 2 asking send_email" },
        onTestFinished,
      );
      const [inFlight, ...others] = (await inspectSession(store, SESSION)).unresolved;
      expect(others).toEqual([]);
      expect(inFlight).toMatchObject({ kind: "model", status: "requested" });
      const holder = await runOf(store, inFlight?.runId ?? "");
      expect(holder?.parentRunId).toBe(RUN);
      expect(holder?.steps.map((step) => step.kind)).toEqual(["model", "tool", "model"]);

      // Model calls count as idempotent: no person is asked, the resume goes on.
      const { handler, invoke } = resume();
      expect((await invoke()).messages.at(-1)?.content).toBe("finished");
      await handler.completeRun("done");
      // The call in flight was paid for in the dead process and again here (its answer was
      // lost); every other call once: the lookup before it and the router are not run again.
      expect(counts()).toEqual({ ...EACH_ONCE, "researcher 2": 4 });
      const { runs, unresolved } = await inspectSession(store, SESSION);
      expect(unresolved).toEqual([]);
      const retried = (await runOf(store, inFlight?.runId ?? ""))?.steps.find((step) =>
        step.attempts.some((attempt) => attempt.attemptId === inFlight?.attemptId),
      );
      const [first, retry] = retried?.attempts ?? [];
      expect(retried?.attempts.map((attempt) => attempt.status)).toEqual([
        "requested",
        "completed",
      ]);
      expect(first?.retriedBy).toBe(retry?.attemptId);
      const root = runs.find((run) => run.runId === RUN);
      expect(root?.children.map((run) => [run.status, run.steps.length])).toEqual([
        ["completed", 5],
        ["completed", 5],
      ]);
    });
  }

  it("resumes a thread recorded flat, before subgraphs had child runs, in the handler's run", async ({
    onTestFinished,
  }) => {
    const { store, resume, counts, stopThenApprove } = await crashAndResume(
      "flat",
      { mode: "node", crashIn: "send_email 2", flat: true },
      onTestFinished,
    );
    const [inFlight] = (await inspectSession(store, SESSION)).unresolved;
    expect(inFlight).toMatchObject({ runId: RUN, name: "send_email", toolCallId: "send-2" });
    await stopThenApprove(inFlight);
    const { handler, invoke } = resume();
    expect((await invoke()).messages.at(-1)?.content).toBe("finished");
    await handler.completeRun("done");
    expect(counts()).toEqual(EACH_ONCE);
    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    expect(runs.find((run) => run.runId === RUN)?.children).toEqual([]);
  });
});
