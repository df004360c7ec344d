import { readWholeSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, describe, expect, test } from "vitest";
import { resumeRun } from "./index.js";
import { type CartContext, cartAgent } from "./testing/cart-agent.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const DIES_AFTER_CART = "cart: dies in the model call after create_cart";

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-resumed-context-", afterAll);
ledgers.prepare(DIES_AFTER_CART);

// What the README says survives a resume of the run's context, and what the app does about it.
describe("the run's context after a crash between checkpoints", () => {
  test("a tool's write to the context is not made again: the resumed run starts from the context it is given", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CART);
    const second = cartAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      context: {},
    });
    // create_cart was answered from the ledger: its write to the context never happened here.
    expect(second.effects).toEqual(["charge undefined"]);
    expect(String(result.finalOutput)).toContain("no cart");
  });

  test("rebuilt from the recorded tool result and given to resumeRun, the context is what the live run had", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CART);
    const events = await readWholeSession(store, "s");
    const requested = events.find(
      (event) =>
        event.type === "tool.requested" &&
        (event.payload as { name?: unknown }).name === "create_cart",
    );
    const created = events.find(
      (event) => event.type === "tool.completed" && event.attemptId === requested?.attemptId,
    );
    const result = String((created?.payload as { result?: unknown } | undefined)?.result);
    const context: CartContext = { cartId: /cart (\S+) created/.exec(result)?.[1] };

    const second = cartAgent();
    second.model.calls = 1;
    const resumed = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(second.effects).toEqual(["charge cart-123"]);
    expect(String(resumed.finalOutput)).toContain("paid cart-123");
  });
});
