import type { EventStore } from "@agent-ledger/core";
import type { Model } from "@openai/agents";
import type { LedgerRunResult } from "../run-ends.js";
import { scriptedProvider } from "./scripted-model.js";

/** Options of a test's recorded run: session "s", run `runId`, every model call answered by `model`. */
export function runOptions(store: EventStore, model: Model, runId = "root") {
  return { store, sessionId: "s", runId, modelProvider: scriptedProvider(model) };
}

/** The first interruption of a paused run and the state to decide it on; throws if there is none. */
export function firstInterruption(paused: LedgerRunResult) {
  const item = paused.interruptions[0];
  if (!paused.state || !item) throw new Error("expected an interruption");
  return { state: paused.state, item };
}
