import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "model-threads-session";
export const RUN = "model-threads-run";
/** Two LangGraph threads served by one handler (one session, one run). */
export const FIRST = "thread-a";
export const SECOND = "thread-b";

/**
 * One process's agent on the run: it answers every call with what its thread's user said last.
 * With `crashIn`, the process dies during that thread's model call: its outcome is never
 * recorded.
 */
export function threadsAgent(store: EventStore, options: { crashIn?: string } = {}) {
  const { handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: (messages: BaseMessage[]) => {
      const last = messages.filter((message) => HumanMessage.isInstance(message)).at(-1);
      const said = String(last?.content);
      if (options.crashIn !== undefined && said.startsWith(options.crashIn)) return crashHere();
      return new AIMessage(`you said ${said}`);
    },
  });
  return {
    handler,
    /** Invokes the agent on `thread` with one user message (`null`: goes on from its checkpoint). */
    say: (thread: string, text: string | null) =>
      agent.invoke(
        text === null ? null : { messages: [new HumanMessage(`${thread}: ${text}`)] },
        threadConfig(handler, thread),
      ),
  };
}

export const modelThreadsCrashes = {
  /** Thread A's turn completes; the process dies during thread B's model call. */
  "model-in-flight-other-thread": async (store) => {
    const first = threadsAgent(store, { crashIn: SECOND });
    await first.say(FIRST, "hello");
    await first.say(SECOND, "hi");
  },
} satisfies Record<string, CrashScenario>;
