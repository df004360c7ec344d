import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines } from "./testing/helpers.js";
import { agentWorld, SESSION } from "./testing/nested-decision.test.data.js";
import {
  between,
  crashedIn,
  person,
  refusalIn,
  toolEvents,
  unresolvedAttempt,
} from "./testing/nested-decision-steps.test.data.js";

const crashed = crashedIn(scratchDirectory("langchain-nested-fresh-ids-", { beforeAll, afterAll }));
const FRESH = { freshIds: true };

// A sub-agent without a checkpointer runs again from its start with checkout, its model called
// live (a callback cannot answer it from the ledger): a real provider's answer then gives charge
// a new id (call_<random>), which no recorded call has. The recorded charge, made inside the
// same checkout call, is still this call: matched by name and order, it is not run again.
// Concurrent: each test has its own ledger and logs; a crash test mostly waits for its child.
describe.concurrent("a sub-agent inside a tool whose model gives a new tool-call id in each answer", () => {
  it(`createAgent${between["stateless-sub-agent"]}: killed in checkout after the charge, the resume hands the sub-agent the charge's answer`, async ({
    onTestFinished,
  }) => {
    const path = "stateless-sub-agent";
    const args = [path, "fresh-ids"];
    const { store, charges } = await crashed(
      "after-charge",
      "agent",
      "after-charge",
      onTestFinished,
      ...args,
    );
    expect(lines(charges)).toBe(1);
    const resumed = agentWorld(store, charges, "none", path, FRESH);
    expect(await resumed.resume()).toEqual({ answer: "Done: order placed (paid: charged 5)" });
    expect(lines(charges)).toBe(1);
    expect((await toolEvents(store)).outcomes).toEqual([
      "tool.completed charge",
      "tool.completed checkout",
    ]);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  it(`createAgent${between["callback-sub-agent"]}: killed in checkout after the charge, the refusal names checkout's call, which a person can abandon`, async ({
    onTestFinished,
  }) => {
    const path = "callback-sub-agent";
    const args = [path, "fresh-ids"];
    const { store, charges } = await crashed(
      "after-charge-callback",
      "agent",
      "after-charge",
      onTestFinished,
      ...args,
    );
    expect(lines(charges)).toBe(1);
    const stopped = await agentWorld(store, charges, "none", path, FRESH).resume();
    const refusal = refusalIn(stopped);
    expect(refusal?.details).toMatchObject({
      name: "checkout",
      inner: { name: "charge", status: "completed" },
    });
    expect(lines(charges)).toBe(1);
    expect((await toolEvents(store)).outcomes).toEqual(["tool.completed charge"]);

    const ops = await person(store);
    await ops.abandon(
      await unresolvedAttempt(store, refusal?.details.attemptId),
      "the charge went through: order placed",
    );
    const resumed = agentWorld(store, charges, "none", path, FRESH);
    expect(await resumed.resume()).toEqual({
      answer: expect.stringContaining("the charge went through: order placed"),
    });
    expect(lines(charges)).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  for (const path of ["stateless-sub-agent", "callback-sub-agent"] as const)
    it(`createAgent${between[path]}: the charge abandoned, the resume does not charge again`, async ({
      onTestFinished,
    }) => {
      const args = [path, "fresh-ids"];
      const { store, charges } = await crashed(
        `abandon-${path}`,
        "agent",
        "in-charge",
        onTestFinished,
        ...args,
      );
      expect(lines(charges)).toBe(1);
      const stopped = await agentWorld(store, charges, "none", path, FRESH).resume();
      const refusal = refusalIn(stopped);
      expect(refusal?.details).toMatchObject({ name: "charge" });
      expect(lines(charges)).toBe(1);

      const ops = await person(store);
      await ops.abandon(
        await unresolvedAttempt(store, refusal?.details.attemptId),
        "charged at the bank: order placed by hand",
      );
      const resumed = agentWorld(store, charges, "none", path, FRESH);
      expect(await resumed.resume()).toEqual({
        answer: expect.stringContaining("order placed by hand"),
      });
      expect(resumed.modelSaw).toEqual([
        path === "stateless-sub-agent"
          ? "checkout: order placed (paid: This tool call did not finish (a crash or an abort cut it off) and was not run again: charged at the bank: order placed by hand)"
          : "checkout: This tool call did not finish (a crash or an abort cut it off) and was not run again: charge, called inside this tool call, was abandoned: charged at the bank: order placed by hand",
      ]);
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });
});
