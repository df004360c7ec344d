import { AIMessage } from "@langchain/core/messages";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "session-1";
export const RUN = "run-1";

/** A model's answer that asks for one `search` per [id, query] pair. */
export function searches(...calls: [id: string, query: string][]): AIMessage {
  return new AIMessage({
    content: "",
    tool_calls: calls.map(([id, query]) => ({ id, name: "search", args: { query } })),
  });
}

export const callbackHandlerCrashes = {
  /**
   * Two completions, then the process dies: the first asked for call-a, the second for nothing,
   * and call-a never ran.
   */
  "callback-handler:two-completions": async (store) => {
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = new ScriptedChatModel((_, call) =>
      call === 1 ? searches(["call-a", "a"]) : new AIMessage("thinking"),
    );
    await model.invoke("find", { callbacks: [handler] });
    await model.invoke("again", { callbacks: [handler] });
    await crashHere();
  },
} satisfies Record<string, CrashScenario>;
