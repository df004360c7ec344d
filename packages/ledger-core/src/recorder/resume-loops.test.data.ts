// Agent loops the resume tests run twice: first in a child process that is SIGKILLed (see
// resume.test.ts), then again in the test on the ledger the child left. Compiled to dist/, where
// the child imports them from.
import type { Actor } from "../events/types.js";
import type { Attempt } from "./attempt.js";
import type { SessionRecorder } from "./session-recorder.js";

export const actor: Actor = { type: "agent", id: "shop" };
export const address = { sessionId: "s", runId: "r" };

/** The payment of `shop`, as its loop asks for it. */
const payment = {
  toolCallId: "pay-1",
  name: "pay",
  args: { amount: 5 },
  effect: { kind: "write", idempotent: false },
} as const;

/**
 * A hand-written agent loop: one model call, then a payment that times out on its first try
 * and is retried with `recorder.retry`; the model call is retried the same way once. The
 * counters say how often the provider and the bank were really called.
 */
export function shop() {
  const calls = { model: 0, pay: 0 };
  async function settle(recorder: SessionRecorder, first: Attempt, call: () => unknown) {
    let attempt = first;
    for (;;) {
      const replayed = attempt.replayed;
      if (replayed?.status === "completed") return replayed.result;
      if (replayed === undefined) {
        try {
          const result = call();
          await (attempt.kind === "model"
            ? recorder.modelCompleted(attempt, result)
            : recorder.toolCompleted(attempt, result));
          return result;
        } catch (error) {
          await (attempt.kind === "model"
            ? recorder.modelFailed(attempt, error)
            : recorder.toolFailed(attempt, error));
        }
      }
      attempt = await recorder.retry(attempt);
    }
  }
  async function run(recorder: SessionRecorder) {
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { prompt: "pay 5" } });
    await settle(recorder, model, () => {
      calls.model++;
      if (calls.model === 1) throw new Error("429 rate limited");
      return { toolCalls: [{ id: "pay-1" }] };
    });
    const pay = await recorder.beforeToolCall(payment);
    return settle(recorder, pay, () => {
      calls.pay++;
      if (calls.pay === 1) throw new Error("bank timeout, nothing charged");
      return "charged";
    });
  }
  return { calls, run };
}

/**
 * A parent that hands a task to a helper (a child run), then answers with its result; with
 * `crashAfterChild` it stops once the helper has finished, before it answers.
 */
export async function delegate(parent: SessionRecorder, crashAfterChild: boolean) {
  await parent.startRun();
  const helper = parent.child({ actor: { type: "agent", id: "helper" } });
  await helper.startRun({ task: "look up the price" });
  const call = await helper.beforeModelCall({ request: { prompt: "price?" } });
  if (!call.replayed) await helper.modelCompleted(call, "5 EUR");
  await helper.completeRun("5 EUR");
  if (crashAfterChild) return undefined;
  return parent.completeRun("it costs 5 EUR");
}
