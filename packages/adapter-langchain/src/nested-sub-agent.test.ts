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
  unresolvedAttempt,
} from "./testing/nested-decision-steps.test.data.js";

const crashed = crashedIn(scratchDirectory("langchain-nested-sub-agent-", { beforeAll, afterAll }));

// Concurrent: each test has its own ledger and logs; a crash test mostly waits for its child.
describe.concurrent("a sub-agent with ledgerMiddleware, inside a tool cut off by a crash", () => {
  // With ledgerMiddleware the sub-agent, run again with checkout, is handed charge's recorded
  // outcome and goes on: charge's call is matched though the sub-agent's model was called again.
  for (const path of ["sub-agent", "stateless-sub-agent"] as const) {
    it(`createAgent${between[path]}: killed in checkout after the charge, the resume hands the sub-agent the charge's answer`, async ({
      onTestFinished,
    }) => {
      const name = `after-charge-${path}`;
      const { store, charges } = await crashed(name, "agent", "after-charge", onTestFinished, path);
      expect(lines(charges)).toBe(1);
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({ answer: "Done: order placed (paid: charged 5)" });
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

    it(`createAgent${between[path]}: the charge abandoned, the resume hands the sub-agent the abandonment, and does not charge`, async ({
      onTestFinished,
    }) => {
      const name = `abandon-${path}`;
      const { store, charges } = await crashed(name, "agent", "in-charge", onTestFinished, path);
      const stopped = await agentWorld(store, charges, "none", path).resume();
      const refusal = refusalIn(stopped);
      expect(refusal?.details).toMatchObject({ name: "charge" });

      const ops = await person(store);
      await ops.abandon(
        await unresolvedAttempt(store, refusal?.details.attemptId),
        "charged at the bank: order placed by hand",
      );
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: expect.stringContaining("order placed by hand"),
      });
      expect(resumed.modelSaw).toEqual([
        "checkout: order placed (paid: This tool call did not finish (a crash or an abort cut it off) and was not run again: charged at the bank: order placed by hand)",
      ]);
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });
  }
});
