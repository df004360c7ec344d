import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { type Script, ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "retry-session";
export const RUN = "retry-run";

/** The prompt of the retried call, in the crashed process and in the one that resumes. */
export function retriedPrompt(): BaseMessage[] {
  return [new HumanMessage("hi")];
}

export const modelRetryCrashes = {
  /** The first call fails; the process dies during withRetry's second attempt. */
  "model-retry": async (store) => {
    const crashing = new ScriptedChatModel((_messages: BaseMessage[], call: number) => {
      if (call === 1) throw new Error("503 overloaded");
      return crashHere();
    });
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await crashing
      .withRetry({ stopAfterAttempt: 2 })
      .invoke(retriedPrompt(), { callbacks: [handler] });
  },
} satisfies Record<string, CrashScenario>;

/** A model whose provider is overloaded on its first call only. */
export function overloadedOnce() {
  return new ScriptedChatModel((_messages: BaseMessage[], call: number) => {
    if (call === 1) throw new Error("503 overloaded");
    return new AIMessage("ok");
  });
}

/** A model that `provider` serves under the model id every ScriptedChatModel has (scripted-1). */
export class ProviderModel extends ScriptedChatModel {
  readonly provider: string;

  constructor(provider: string, script: Script) {
    super(script);
    this.provider = provider;
  }

  override getLsParams(options: this["ParsedCallOptions"]) {
    return { ...super.getLsParams(options), ls_provider: this.provider };
  }
}

/** A model whose every call fails as a rate-limited provider's does. */
export function rateLimited(provider = "openai") {
  return new ProviderModel(provider, () => {
    throw new Error("429 rate limited");
  });
}
