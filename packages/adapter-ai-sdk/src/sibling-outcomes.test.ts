import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspectSession, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";
import {
  crashSiblingsInChild,
  type Mode,
  runSiblings,
  SIBLINGS,
  type Sibling,
  siblingModel,
  siblingTools,
} from "./testing/sibling-tools.test.data.js";

// A resumed step runs a tool call again (idempotent, or approved by a person) beside one the
// ledger refuses (in flight at the crash, not idempotent): the refusal stops the run, but the
// call that ran and returned is recorded as completed. Left in flight, the ledger would say
// "may or may not have happened" of an effect the process knew had happened, the next resume
// would run it again (a person's approval, twice).

const scratch = scratchDirectory("ai-sdk-siblings-", { beforeAll, afterAll });
let crashes = 0;

/** The `agent-ledger` binary a person runs: the CLI package's build (made by `tsc -b`). */
const BIN = fileURLToPath(new URL("../../cli/dist/bin.js", import.meta.url));

/** `agent-ledger --store sqlite:<path> ...args`, in a process of its own. */
function agentLedger(path: string, ...args: string[]) {
  if (!existsSync(BIN)) throw new Error(`${BIN} is not built: run npx tsc -b first`);
  return new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, "--store", `sqlite:${path}`, ...args],
      { env: { ...process.env, AGENT_LEDGER_STORE: "", USER: "ops" }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        resolve({ code, stdout: stdout + stderr });
      },
    );
  });
}

/** The agent SIGKILLed with both tool calls in flight: its SQLite file, opened again, and its effects. */
async function crashed(mode: Mode, sibling: Sibling) {
  const path = join(scratch, `crash-${++crashes}.db`);
  const effects = await crashSiblingsInChild(mode, sibling, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { path, store, effects };
}

/** The agent resumed in this process: what it gave back (or threw), its effects and provider calls. */
async function resume(store: SqliteEventStore, mode: Mode, sibling: Sibling) {
  const recorder = await SessionRecorder.resume({ store, actor, ...SIBLINGS });
  const effects: string[] = [];
  const inner: { model?: LanguageModel } = {};
  const tools = siblingTools({
    inner,
    onEffect: (effect) => effects.push(effect),
    // The sibling returns once the refusal beside it has stopped the run.
    afterEffect: (name) => new Promise((done) => setTimeout(done, name === "send_email" ? 0 : 30)),
  });
  const model = siblingModel(sibling);
  const run = await runSiblings({ recorder, mode, model: model.model, tools, inner }).then(
    (result) => ({ result, error: undefined }),
    (error: unknown) => ({ result: undefined, error }),
  );
  return { recorder, ...run, effects, providerCalls: model.calls };
}

/** The outcome events of the sibling's attempts, and the calls inspection lists as unresolved. */
async function ledgerOf(store: SqliteEventStore, sibling: Sibling) {
  const events = await readWholeRun(store, SIBLINGS);
  const attempts = new Set(
    events
      .filter((event) => event.type === "tool.requested" && payload(event).name === sibling)
      .map((event) => event.attemptId),
  );
  const outcomes = events
    .filter((event) => event.type.startsWith("tool.") && event.type !== "tool.requested")
    .filter((event) => attempts.has(event.attemptId))
    .map((event) => event.type);
  const inspection = await inspectSession(store, SIBLINGS.sessionId);
  return {
    outcomes,
    unresolved: inspection.unresolved.map((attempt) => attempt.name),
    status: inspection.runs[0]?.status,
  };
}

/**
 * A person abandons send_email, and the next resume answers `sibling` from the ledger: the run
 * ends "All done" with one provider call (the final answer) and no tool run again.
 */
async function abandonSendEmailAndFinish(
  store: SqliteEventStore,
  mode: Mode,
  sibling: Sibling,
): Promise<void> {
  const [sendEmail] = (await inspectSession(store, SIBLINGS.sessionId)).unresolved;
  const person = await SessionRecorder.resume({ store, actor, ...SIBLINGS });
  await person.abandon(sendEmail as NonNullable<typeof sendEmail>, "checked: the email was sent");
  const second = await resume(store, mode, sibling);
  expect(second.error).toBeUndefined();
  expect(second.result?.text).toBe("All done");
  expect(second.effects).toEqual([]);
  expect(second.providerCalls).toBe(1);
  await second.recorder.completeRun({ text: "All done" });
}

const unresolvedAttempt = { code: "unresolved-attempt", attempt: { name: "send_email" } };

describe.each(["generate", "stream"] as const)(
  "%sText: a tool that ran beside a refused call",
  (mode) => {
    it("lookup (idempotent) run again is recorded as completed, and does not run a third time", async () => {
      const { store, effects: crashedEffects } = await crashed(mode, "lookup");
      expect(crashedEffects.sort()).toEqual(["email bob", "lookup 42"]);
      expect((await ledgerOf(store, "lookup")).unresolved).toEqual(["lookup", "send_email"]);

      // Resumed: send_email is refused (in flight, not idempotent), lookup runs again beside it.
      const first = await resume(store, mode, "lookup");
      expect(first.effects).toEqual(["lookup 42"]);
      if (mode === "generate") expect(first.error).toMatchObject(unresolvedAttempt);
      else {
        // The SDK gets lookup's own result, not send_email's refusal; the refusal stops the run
        // at the next model call (an error part).
        expect(first.result?.parts).toEqual([
          "tool-error:send_email:unresolved-attempt",
          'tool-result:lookup:{"order":42,"status":"shipped"}',
          "error:unresolved-attempt",
        ]);
      }
      expect(first.providerCalls).toBe(0);
      // Recorded once, for the run that made it; only send_email is left for a person.
      expect(await ledgerOf(store, "lookup")).toEqual({
        outcomes: ["tool.completed"],
        unresolved: ["send_email"],
        status: "running",
      });

      // A person abandons send_email; the next resume answers lookup from the ledger.
      await abandonSendEmailAndFinish(store, mode, "lookup");
      expect(await ledgerOf(store, "lookup")).toEqual({
        outcomes: ["tool.completed"],
        unresolved: [],
        status: "completed",
      });
    });

    it("research (idempotent), run again, asks the model inside although the refusal beside it stopped the run, and is recorded as completed", async () => {
      const { store, effects: crashedEffects } = await crashed(mode, "research");
      expect(crashedEffects.sort()).toEqual(["email bob", "research 42"]);

      // Resumed: send_email is refused, research runs again beside it and, once the refusal
      // has stopped the run, asks the model on its own child run.
      const first = await resume(store, mode, "research");
      expect(first.effects).toEqual(["research 42"]);
      if (mode === "generate") expect(first.error).toMatchObject(unresolvedAttempt);
      else
        expect(first.result?.parts).toContain(
          'tool-result:research:{"order":42,"facts":"order 42 shipped"}',
        );
      expect(first.providerCalls).toBe(1);
      // Left unrecorded, each resume until a person decides send_email would run research
      // again, and leave one more retry of it in flight.
      expect(await ledgerOf(store, "research")).toEqual({
        outcomes: ["tool.completed"],
        unresolved: ["send_email"],
        status: "running",
      });

      await abandonSendEmailAndFinish(store, mode, "research");
      const inspection = await inspectSession(store, SIBLINGS.sessionId);
      expect(inspection.unresolved).toEqual([]);
      expect(inspection.runs.map((run) => run.status)).toEqual(["completed"]);
    });

    it("charge (not idempotent), approved and run again, is recorded: no second approval, no third charge", async () => {
      const { path, store, effects: crashedEffects } = await crashed(mode, "charge");
      expect(crashedEffects.sort()).toEqual(["charge 10", "email bob"]);
      // The person finds the charge declined at the bank: approve it (run it once more).
      const inFlight = (await inspectSession(store, SIBLINGS.sessionId)).unresolved;
      const charge = inFlight.find((attempt) => attempt.name === "charge");
      expect(
        await agentLedger(
          path,
          "resolve",
          "--approve",
          "declined at the bank",
          "--",
          SIBLINGS.sessionId,
          charge?.attemptId ?? "",
        ),
      ).toMatchObject({ code: 0 });

      const first = await resume(store, mode, "charge");
      expect(first.effects).toEqual(["charge 10"]);
      if (mode === "generate") expect(first.error).toMatchObject(unresolvedAttempt);
      else expect(first.result?.parts).toContain('tool-result:charge:"charged"');
      // The charge that ran is completed: the ledger does not ask about it again.
      expect(await ledgerOf(store, "charge")).toEqual({
        outcomes: ["tool.completed"],
        unresolved: ["send_email"],
        status: "running",
      });

      const sendEmail = (await inspectSession(store, SIBLINGS.sessionId)).unresolved[0];
      expect(
        await agentLedger(
          path,
          "resolve",
          "--abandon",
          "sent, checked in the mail log",
          "--",
          SIBLINGS.sessionId,
          sendEmail?.attemptId ?? "",
        ),
      ).toMatchObject({ code: 0 });
      const second = await resume(store, mode, "charge");
      expect(second.result?.text).toBe("All done");
      expect(second.effects).toEqual([]);
      await second.recorder.completeRun({ text: "All done" });
      expect(await ledgerOf(store, "charge")).toEqual({
        outcomes: ["tool.completed"],
        unresolved: [],
        status: "completed",
      });
    });
  },
);
