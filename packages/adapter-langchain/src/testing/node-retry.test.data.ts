import type { EventStore } from "@agent-ledger/core";
import { HumanMessage } from "@langchain/core/messages";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import type { CrashScenario } from "./crash-point.js";
import { askForLookup, flakyLookup } from "./flaky-lookup.test.data.js";
import { threadConfig, toolGraph } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "node-retry-session";
export const RUN = "node-retry-run";

/**
 * A plain graph whose tools node LangGraph runs again when it throws (`retryPolicy`, up to 3
 * runs, no wait), recorded by the handler alone, on the ledger's checkpoint saver. `lookup`
 * throws on its first `failures` runs (see flakyLookup: `inChild`, `crashOnRun`).
 */
export function retryingGraph(
  store: EventStore,
  options: { idempotent: boolean; failures: number; crashOnRun?: number; inChild?: boolean },
) {
  const { runs, lookup } = flakyLookup(options);
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const graph = toolGraph(
    new ScriptedChatModel(askForLookup),
    [lookup],
    new LedgerCheckpointSaver({ store }),
    { handleToolErrors: false },
    { maxAttempts: 3, initialInterval: 0, jitter: false, logWarning: false },
  );
  const invoke = async (input: { messages: HumanMessage[] } | null) => {
    const result = await graph.invoke(input, threadConfig(handler));
    return String(result.messages.at(-1)?.content);
  };
  return { runs, invoke };
}

export const nodeRetryCrashes = {
  /** `lookup` (args: "idempotent" or not) throws; the process dies inside the node's retry. */
  "node-retry-in-flight": async (store, args) => {
    const { invoke } = retryingGraph(store, {
      idempotent: args[0] === "idempotent",
      failures: 1,
      crashOnRun: 2,
      inChild: true,
    });
    await invoke({ messages: [new HumanMessage("go")] });
  },
} satisfies Record<string, CrashScenario>;
