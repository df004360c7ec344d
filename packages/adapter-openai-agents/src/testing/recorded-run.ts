import {
  type AtifStep,
  type EventStore,
  type LedgerEvent,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { type Agent, type Model, Runner } from "@openai/agents";
import { ledgerModelProvider } from "../ledger-model.js";
import type { LedgerRunResult } from "../run-ends.js";
import { scriptedProvider } from "./scripted-model.js";

/** Options of a test's recorded run: session "s", run `runId`, every model call answered by `model`. */
export function runOptions(store: EventStore, model: Model, runId = "root") {
  return { store, sessionId: "s", runId, modelProvider: scriptedProvider(model) };
}

/** The `tool.*` events of the tool call `toolCallId` in session "s", wherever it was recorded. */
export async function toolCallEvents(
  store: EventStore,
  toolCallId: string,
): Promise<LedgerEvent[]> {
  return (await readWholeSession(store, "s")).filter(
    (event) =>
      event.type.startsWith("tool.") &&
      (event.payload as { toolCallId?: string }).toolCallId === toolCallId,
  );
}

/** The first interruption of a paused run and the state to decide it on; throws if there is none. */
export function firstInterruption(paused: LedgerRunResult) {
  const item = paused.interruptions[0];
  if (!paused.state || !item) throw new Error("expected an interruption");
  return { state: paused.state, item };
}

/**
 * The final output of a run of `made` (an agent and its scripted model) with the plain SDK, no
 * ledger: what a recorded run, and its resume, must answer too.
 */
export async function outputWithoutLedger(made: {
  // biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
  agent: Agent<any, any>;
  model: Model;
}): Promise<string> {
  const result = await new Runner({ modelProvider: scriptedProvider(made.model) }).run(
    made.agent,
    "go",
  );
  return String(result.finalOutput);
}

/**
 * A recorder of run "root" of session "s" on `store`, as an app that records its runs itself
 * makes one (for `ledgerModelProvider` with `{ recorder }`): a run started, or resumed after a
 * crash.
 */
export async function appRecorder(
  store: EventStore,
  how: "start" | "resume",
): Promise<SessionRecorder> {
  const options = {
    store,
    sessionId: "s",
    runId: "root",
    actor: { type: "agent" as const, id: "app" },
  };
  if (how === "resume") return SessionRecorder.resume(options);
  const recorder = new SessionRecorder(options);
  await recorder.startRun();
  return recorder;
}

/**
 * A streamed run of `made` (an agent and its scripted model) on "go", read to its end, every
 * model call recorded by `recorder`: how an app streams a run it resumes, which resumeRun does
 * not. Rejects with the run's error.
 */
export async function streamedRun(
  made: {
    // biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
    agent: Agent<any, any>;
    model: Model;
  },
  recorder: SessionRecorder,
) {
  const runner = new Runner({
    modelProvider: ledgerModelProvider(scriptedProvider(made.model), { recorder }),
  });
  const result = await runner.run(made.agent, "go", { stream: true });
  for await (const _event of result) {
    // read the stream
  }
  await result.completed.catch(() => undefined);
  if (result.error) throw result.error;
  return result;
}

/** A trajectory's steps of the agent (its model's turns), in order. */
export function agentSteps(steps: AtifStep[]): AtifStep[] {
  return steps.filter((step) => step.source === "agent");
}
