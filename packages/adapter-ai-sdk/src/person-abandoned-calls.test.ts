import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import type { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { describe, expect, it } from "vitest";
import { RESEARCH, researchModel, runResearch } from "./testing/research-agent.test.data.js";
import {
  crashedLedgers,
  researchRuns as runsOf,
  types,
} from "./testing/research-ledger.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";

// A person abandons a tool call that a crash left in flight with `agent-ledger resolve
// --abandon`, before the agent is resumed: the calls the tool had in flight inside it (on its
// child run) are abandoned at once, and the child run cancelled, as the resume would have done.
// The CLI and a resume may do it at the same time, in two processes: neither leaves it half done.

/** The `agent-ledger` binary a person runs: the CLI package's build (made by `tsc -b`). */
const BIN = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));

/** `agent-ledger --store sqlite:<the store's file> ...args`, in a process of its own. */
function agentLedger(store: SqliteEventStore, ...args: string[]) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx tsc -b first`);
  const path = store.describe().location as string;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, "--store", `sqlite:${path}`, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "", USER: "ops" }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const crashInside = crashedLedgers("ai-sdk-person-abandoned-");

/** The crash: research (not idempotent) and the model call inside it, both in flight. */
async function crashedInsideResearch() {
  const store = await crashInside("research, not idempotent, inside its inner call");
  const [research, inner] = (await inspectSession(store, RESEARCH.sessionId)).unresolved;
  if (research?.name !== "research" || inner?.kind !== "model")
    throw new Error("research and its inner call are not in flight");
  return { store, research, inner };
}

/** The research agent resumed, research not idempotent, with the text and calls it made. */
async function resume(
  store: EventStore,
  onUnresolved?: () => { action: "abandon"; reason: string },
) {
  const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
  const { model, calls } = researchModel("single");
  const text = await runResearch({
    recorder,
    variant: "single",
    model,
    idempotent: false,
    ...(onUnresolved ? { onUnresolved } : {}),
  });
  return { text, calls };
}

const actorOf = (event: LedgerEvent | undefined) => event?.actor?.type;

describe("agent-ledger resolve --abandon of a tool call in flight at a crash", () => {
  it("settles the call in flight inside it at once; the resume then writes nothing there", async () => {
    const { store, research, inner } = await crashedInsideResearch();
    const reason = "the research was filed by hand";

    const resolved = await agentLedger(
      store,
      "resolve",
      "research",
      research.attemptId,
      "--abandon",
      reason,
    );
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toContain(
      `  run ${inner.runId}: abandoned attempt ${inner.attemptId} (model research-1); cancelled\n`,
    );
    const inspection = await inspectSession(store, RESEARCH.sessionId);
    expect(inspection.unresolved).toEqual([]);
    const { child } = await runsOf(store);
    expect(types(child)).toEqual([
      "run.started",
      "model.requested",
      "attempt.abandoned",
      "run.cancelled",
    ]);
    // The same words a resume abandoning research would have written.
    expect(payload(child[2]).reason).toBe(
      `its tool call research (call_0) was abandoned: ${reason}`,
    );
    expect(payload(child[3]).reason).toBe(reason);
    expect([actorOf(child[2]), actorOf(child[3])]).toEqual(["human", "human"]);

    // The resume answers research with its abandonment and goes on; nothing more inside.
    const length = (await readWholeSession(store, RESEARCH.sessionId)).length;
    const resumed = await resume(store);
    expect([resumed.text, resumed.calls]).toEqual(["summary", ["final"]]);
    const after = await readWholeSession(store, RESEARCH.sessionId);
    expect(after.slice(length).every((event) => event.runId === RESEARCH.runId)).toBe(true);
  });
});

/**
 * `store`, whose first append of an event of `type` to a run other than the agent's first lets
 * `other` run to its end: another process writing there between this one's read and its write.
 */
function racedAt(store: EventStore, type: string, other: () => Promise<unknown>): EventStore {
  let pending: (() => Promise<unknown>) | undefined = other;
  const append: EventStore["append"] = async (request) => {
    const race = pending;
    if (race && request.runId !== RESEARCH.runId && request.events.some((e) => e.type === type)) {
      pending = undefined;
      await race();
    }
    return store.append(request);
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "append") return append;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("agent-ledger resolve and a resume settling the same child run, in two processes", () => {
  for (const [when, type, abandonedBy] of [
    ["before the resume abandons the call inside", "attempt.abandoned", "human"],
    ["after it, before the resume cancels the child run", "run.cancelled", "agent"],
  ] as const)
    it(`the CLI gets there ${when}: the resume reads the run again; each event once`, async () => {
      const { store, research } = await crashedInsideResearch();
      const reason = "abandoned after the crash";
      // The person runs resolve on research, which the resume has just abandoned (resolve
      // finishes an abandonment whose calls inside are still in flight, with its reason).
      let cli: Awaited<ReturnType<typeof agentLedger>> | undefined;
      const raced = racedAt(store, type, async () => {
        cli = await agentLedger(store, "resolve", "research", research.attemptId, "--abandon", "x");
      });

      const resumed = await resume(raced, () => ({ action: "abandon", reason }));
      expect([resumed.text, resumed.calls]).toEqual(["summary", ["final"]]);
      expect(cli?.stderr).toBe("");
      expect(cli?.code).toBe(0);
      expect(cli?.stdout).toContain(`was abandoned already: ${reason}\n`);

      const { child } = await runsOf(store);
      expect(types(child)).toEqual([
        "run.started",
        "model.requested",
        "attempt.abandoned",
        "run.cancelled",
      ]);
      expect(payload(child[2]).reason).toBe(
        `its tool call research (call_0) was abandoned: ${reason}`,
      );
      expect(payload(child[3]).reason).toBe(reason);
      expect([actorOf(child[2]), actorOf(child[3])]).toEqual([abandonedBy, "human"]);
      expect((await inspectSession(store, RESEARCH.sessionId)).unresolved).toEqual([]);
    });
});
