import { join } from "node:path";
import { type LedgerEvent, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled, tool } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { z } from "zod";
import { CONTEXT_CHANGED_EVENT_TYPE } from "./context-changes.js";
import { ledgerTool, resumeRun, runWithLedger } from "./index.js";
import { type CartContext, cartAgent, cartContext, Payments } from "./testing/cart-agent.js";
import { type DeskContext, draftingAgents, ticketHandoffAgents } from "./testing/context-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const DIES_AFTER_CART = "cart: dies right after create_cart completed";
const DIES_AFTER_CHECKOUT_ASKED = "cart: dies after the model asked for checkout";
const DIES_BEFORE_COMPLETION = "cart: dies between create_cart's context change and its completion";
const DIES_AFTER_HANDOFF = "ticket: dies right after the handoff";
const DIES_AFTER_AGENT_TOOL = "draft: dies right after the agent tool call";

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts). Its context
// starts as cartContext(): a coupon, a payments client; create_cart sets cartId, deletes coupon.
const ledgers = new CrashedLedgers("oa-resumed-context-", { beforeAll, afterAll });
ledgers.prepare(
  DIES_AFTER_CART,
  DIES_AFTER_CHECKOUT_ASKED,
  DIES_BEFORE_COMPLETION,
  DIES_AFTER_HANDOFF,
  DIES_AFTER_AGENT_TOOL,
);

const scratch = scratchDirectory("oa-context-changes-", { beforeAll, afterAll });

function contextEvents(events: readonly LedgerEvent[]): LedgerEvent[] {
  return events.filter((event) => event.type === CONTEXT_CHANGED_EVENT_TYPE);
}

describe("what a tool wrote into the run's context, after a crash between checkpoints", () => {
  test("create_cart answered from the ledger gives the context its cart again: checkout, live, charges it, and the instructions name it", async () => {
    const { store, first } = await ledgers.crashed(DIES_AFTER_CART);
    expect(first.effects).toEqual([]);
    const second = cartAgent();
    second.model.calls = 1;
    const context = cartContext();
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(second.effects).toEqual(["charge cart-123"]);
    expect(String(result.finalOutput)).toContain("paid cart-123");
    // Model call 0 was answered from the ledger; the two after create_cart are live, and their
    // instructions were built from the restored context.
    expect(second.model.requests.map((request) => request.systemInstructions)).toEqual([
      "Sell. The cart is cart-123.",
      "Sell. The cart is cart-123.",
    ]);
    expect(context.cartId).toBe("cart-123");
  });

  test("the model request the restored context builds is the recorded one: no replay-divergence, no model call made again", async () => {
    const { store, first } = await ledgers.crashed(DIES_AFTER_CHECKOUT_ASKED);
    expect(first.modelInputs).toHaveLength(2);
    const second = cartAgent();
    second.model.calls = 2;
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      context: cartContext(),
    });
    expect(result.status).toBe("completed");
    // Calls 0 and 1 answered from the ledger (call 1's request names the cart: the recorded
    // request); only the last one is made, after checkout ran live on the restored cart.
    expect(second.model.requests).toHaveLength(1);
    expect(second.effects).toEqual(["charge cart-123"]);
    expect(String(result.finalOutput)).toContain("paid cart-123");
  });

  test("a key the tool deleted is deleted again: checkout does not see the coupon create_cart used up", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CART);
    const second = cartAgent();
    second.model.calls = 1;
    const context: CartContext = { coupon: "SAVE10" };
    await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(second.effects).toEqual(["charge cart-123"]);
    expect(Object.keys(context)).toEqual(["cartId"]);
  });

  test("a key no tool changed keeps the value the resume was given, by identity: the app's payments client", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CART);
    const second = cartAgent();
    second.model.calls = 1;
    const payments = new Payments();
    const context: CartContext = { coupon: "SAVE10", payments };
    await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(context.payments).toBe(payments);
    expect(payments.charges).toEqual(["charge cart-123"]);
  });

  test("a change recorded for a call the crash left in flight is not given: the call is asked about, and approved it runs again and writes it itself", async () => {
    const { store } = await ledgers.crashed(DIES_BEFORE_COMPLETION);
    const second = cartAgent();
    second.model.calls = 1;
    const context = cartContext();
    const asked = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(asked.status).toBe("interrupted");
    expect(asked.interruptions.map((item) => item.name)).toEqual(["create_cart"]);
    expect(context.cartId).toBeUndefined();
    expect(context.coupon).toBe("SAVE10");
    const { state, item } = firstInterruption(asked);
    state.approve(item);
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      state,
      context,
    });
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual(["charge cart-123"]);
  });

  test("the ledger holds the change as x.openai-agents.context, committed before the call's tool.completed: keys set, keys deleted, nothing of the keys left alone", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CART);
    const events = await readWholeSession(store, "s");
    const [change] = contextEvents(events);
    const requested = events.find(
      (event) => event.type === "tool.requested" && event.attemptId === change?.attemptId,
    );
    const completed = events.find(
      (event) => event.type === "tool.completed" && event.attemptId === change?.attemptId,
    );
    expect(contextEvents(events)).toHaveLength(1);
    expect(change?.payload).toEqual({
      toolCallId: "call_1",
      set: { cartId: "cart-123" },
      deleted: ["coupon"],
    });
    expect(change?.causedByEventId).toBe(requested?.eventId);
    expect(change?.seq).toBeLessThan(completed?.seq ?? -1);
  });
});

describe("what a tool writes into the run's context, live", () => {
  test("is recorded through the run's redaction, as every payload", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "redacted.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = cartAgent();
    await runWithLedger(made.agent, "buy", {
      ...runOptions(store, made.model),
      context: cartContext(),
      redact: ["**.cartId"],
    });
    const [change] = contextEvents(await readWholeSession(store, "s"));
    expect(change?.payload).toEqual({
      toolCallId: "call_1",
      set: { cartId: "[redacted]" },
      deleted: ["coupon"],
    });
  });

  test("a call that only reads the context records no change", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "unchanged.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = cartAgent();
    await runWithLedger(made.agent, "buy", {
      ...runOptions(store, made.model),
      context: cartContext(),
    });
    const events = await readWholeSession(store, "s");
    // create_cart changed it; checkout only read it.
    expect(contextEvents(events).map((event) => event.attemptId)).toEqual([
      events.find(
        (event) =>
          event.type === "tool.requested" &&
          (event.payload as { toolCallId?: unknown }).toolCallId === "call_1",
      )?.attemptId,
    ]);
  });
});

describe("what other recorded calls wrote into the run's context, after a crash", () => {
  test("a handoff's onHandoff: answered from the ledger, its callback does not run, and billing's charge reads the ticket it kept", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_HANDOFF);
    const second = ticketHandoffAgents();
    second.model.calls = 1;
    const context: DeskContext = {};
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual(["charge ticket T-1 draft undefined"]);
    expect(context).toEqual({ ticket: "T-1" });
  });

  test("an agent run as a tool: the call answered from the ledger gives the context what its agent's tools wrote", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_AGENT_TOOL);
    const second = draftingAgents();
    second.model.calls = 1;
    const context: DeskContext = {};
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(result.status).toBe("completed");
    // drafter did not run again: its model is never called.
    expect(second.drafterModel.requests).toHaveLength(0);
    expect(second.effects).toEqual(["charge ticket undefined draft D-1"]);
  });
});

describe("what a tool wrote into the run's context, resumed from an interruption checkpoint", () => {
  test("with a context of the app's own given to resumeRun (not the saved JSON copy), the approved checkout charges the cart create_cart made", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "checkpoint.db") });
    await store.init();
    onTestFinished(() => store.close());
    const first = cartAgent(undefined, { checkoutNeedsApproval: true });
    const paused = await runWithLedger(first.agent, "buy", {
      ...runOptions(store, first.model),
      context: cartContext(),
    });
    expect(paused.status).toBe("interrupted");

    // The next process: the app's context as it starts every run, its own client in it.
    const second = cartAgent(undefined, { checkoutNeedsApproval: true });
    second.model.calls = 2;
    const payments = new Payments();
    const context: CartContext = { coupon: "SAVE10", payments };
    const asked = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    const { state, item } = firstInterruption(asked);
    state.approve(item);
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      state,
      context,
    });
    expect(result.status).toBe("completed");
    expect(second.effects).toEqual(["charge cart-123"]);
    expect(payments.charges).toEqual(["charge cart-123"]);
    expect(context.payments).toBe(payments);
  });
});

describe("the limits of what is recorded of the run's context", () => {
  test("a redacted change is given back redacted: the resumed checkout charges the cart as the ledger holds it", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "redacted-resume.db") });
    await store.init();
    onTestFinished(() => store.close());
    const redact = ["**.cartId"];
    const first = cartAgent(undefined, { checkoutNeedsApproval: true });
    await runWithLedger(first.agent, "buy", {
      ...runOptions(store, first.model),
      context: cartContext(),
      redact,
    });
    const second = cartAgent(undefined, { checkoutNeedsApproval: true });
    second.model.calls = 2;
    const context = cartContext();
    const asked = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      context,
      redact,
    });
    const { state, item } = firstInterruption(asked);
    state.approve(item);
    await resumeRun(second.agent, { ...runOptions(store, second.model), state, context, redact });
    expect(second.effects).toEqual(["charge [redacted]"]);
  });

  test("a call that leaves a value JSON cannot write in the context stops the run with non-serializable at its key, the call left in flight", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "cycle.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = cartAgent();
    const context: CartContext & { self?: unknown } = {};
    // create_cart's write, then a cycle an app's code could leave there.
    made.agent.tools[0] = ledgerTool(
      tool({
        name: "create_cart",
        description: "make a cart",
        parameters: z.object({}),
        execute: async () => {
          context.self = context;
          return "cart cart-123 created";
        },
      }),
    );
    const error = await runWithLedger(made.agent, "buy", {
      ...runOptions(store, made.model),
      context,
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "non-serializable", path: "$.context.self" });
    const events = await readWholeSession(store, "s");
    expect(
      events.filter((event) => event.type.startsWith("tool.")).map((event) => event.type),
    ).toEqual(["tool.requested"]);
  });
});
