import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lines } from "./testing/helpers.js";
import { agentWorld, SESSION } from "./testing/nested-decision.test.data.js";
import {
  between,
  crashedIn,
  paid,
  person,
  refusalIn,
  toolEvents,
  unresolvedAttempt,
  unresolvedNamed,
} from "./testing/nested-decision-steps.test.data.js";

const crashed = crashedIn(
  scratchDirectory("langchain-nested-two-levels-", { beforeAll, afterAll }),
);

// checkout runs sub-agent A, whose model asks for pay; pay runs sub-agent B, whose model asks for
// charge, killed in flight. The refusal of charge is met two tools down, and must reach checkout,
// the call the outer agent's model asked for, as it does one level down.
// Concurrent: each test has its own ledger and logs; a crash test mostly waits for its child.
describe.concurrent("a call refused inside a sub-agent run by a sub-agent's tool", () => {
  for (const path of ["callback-sub-agents", "stateless-sub-agents"] as const) {
    it(`createAgent${between[path]}: the refusal stops the outer run, and approved, the charge runs once more`, async ({
      onTestFinished,
    }) => {
      const { store, charges } = await crashed(
        `approve-${path}`,
        "agent",
        "in-charge",
        onTestFinished,
        path,
      );
      expect(lines(charges)).toBe(1);
      const charge = (await toolEvents(store)).first("charge");

      for (let resume = 0; resume < 2; resume++) {
        const stopped = await agentWorld(store, charges, "none", path).resume();
        expect(refusalIn(stopped)?.details).toMatchObject({
          attemptId: charge?.attemptId,
          name: "charge",
        });
      }
      expect((await toolEvents(store)).outcomes).toEqual([]);
      expect(lines(charges)).toBe(1);

      const ops = await person(store);
      await ops.approve(
        await unresolvedAttempt(store, charge?.attemptId),
        "no payment at the bank",
      );
      const resumed = agentWorld(store, charges, "none", path);
      const receipt = `order placed (${paid(path)}charged 5)`;
      expect(await resumed.resume()).toEqual({ answer: `Done: ${receipt}` });
      expect(lines(charges)).toBe(2);
      expect(resumed.modelSaw).toEqual([`checkout: ${receipt}`]);
      expect((await toolEvents(store)).outcomes).toEqual([
        "tool.completed charge",
        "tool.completed pay",
        "tool.completed checkout",
      ]);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

    it(`createAgent${between[path]}: abandoned, the charge is not run again, and the outer model is told why`, async ({
      onTestFinished,
    }) => {
      const { store, charges } = await crashed(
        `abandon-${path}`,
        "agent",
        "in-charge",
        onTestFinished,
        path,
      );
      const stopped = await agentWorld(store, charges, "none", path).resume();
      const refusal = refusalIn(stopped);
      expect(refusal?.details).toMatchObject({ name: "charge" });
      expect((await toolEvents(store)).outcomes).toEqual([]);

      const ops = await person(store);
      await ops.abandon(
        await unresolvedAttempt(store, refusal?.details.attemptId),
        "charged at the bank: order placed by hand",
      );
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: expect.stringContaining("order placed by hand"),
      });
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
      const unfinished =
        "This tool call did not finish (a crash or an abort cut it off) and was not run again";
      if (path === "callback-sub-agents") {
        // The callback cannot answer charge: pay and checkout, which ran without it, are
        // abandoned with it, as checkout is one level down.
        expect(resumed.modelSaw).toEqual([
          `checkout: ${unfinished}: charge, called inside this tool call, was abandoned: charged at the bank: order placed by hand`,
        ]);
        expect((await toolEvents(store)).outcomes).toEqual([
          "attempt.abandoned charge",
          "attempt.abandoned pay",
          "attempt.abandoned checkout",
        ]);
      } else {
        // ledgerMiddleware hands the inner sub-agent the abandonment, and each level goes on.
        expect(resumed.modelSaw).toEqual([
          `checkout: order placed (paid: paid: ${unfinished}: charged at the bank: order placed by hand)`,
        ]);
        expect((await toolEvents(store)).outcomes).toEqual([
          "attempt.abandoned charge",
          "tool.completed pay",
          "tool.completed checkout",
        ]);
      }
    });

    it(`createAgent${between[path]}: the person approves checkout, the outer call, and the charge two tools down runs once more`, async ({
      onTestFinished,
    }) => {
      const name = `outer-approve-${path}`;
      const { store, charges } = await crashed(name, "agent", "in-charge", onTestFinished, path);
      expect(refusalIn(await agentWorld(store, charges, "none", path).resume())).toBeDefined();

      const ops = await person(store);
      await ops.approve(await unresolvedNamed(store, "checkout"), "no payment at the bank");
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: `Done: order placed (${paid(path)}charged 5)`,
      });
      expect(lines(charges)).toBe(2);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

    it(`createAgent${between[path]}: the person abandons checkout, the outer call, and nothing two tools down stays unresolved`, async ({
      onTestFinished,
    }) => {
      const name = `outer-abandon-${path}`;
      const { store, charges } = await crashed(name, "agent", "in-charge", onTestFinished, path);
      expect(refusalIn(await agentWorld(store, charges, "none", path).resume())).toBeDefined();

      const ops = await person(store);
      await ops.abandon(
        await unresolvedNamed(store, "checkout"),
        "charged at the bank: placed by hand",
      );
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: expect.stringContaining("charged at the bank: placed by hand"),
      });
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });
  }
});
