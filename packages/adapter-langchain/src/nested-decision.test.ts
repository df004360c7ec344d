import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restoreMessages } from "./restore-messages.js";
import { lines, payloadOf, runEvents } from "./testing/helpers.js";
import { agentWorld, graphWorld, RUN, SESSION } from "./testing/nested-decision.test.data.js";
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

const crashed = crashedIn(scratchDirectory("langchain-nested-decision-", { beforeAll, afterAll }));

// Concurrent: each test has its own ledger and logs; a crash test mostly waits for its child.
describe.concurrent("a call made inside a tool, cut off by a crash, is decided on by a person", () => {
  // Without ledgerMiddleware, the sub-agent's tool node catches the refusal and its model goes
  // on: what checkout then returns was made without the charge, and is no answer either.
  for (const path of ["direct", "callback-sub-agent"] as const)
    it(`createAgent${between[path]}: approved, the next resume charges once more; the refusal is never the outer call's outcome`, async ({
      onTestFinished,
    }) => {
      const name = `approve-${path}`;
      const { store, charges } = await crashed(name, "agent", "in-charge", onTestFinished, path);
      expect(lines(charges)).toBe(1);
      const charge = (await toolEvents(store)).first("charge");

      // Every resume stops with the ledger's refusal, naming the charge, until a person decides.
      for (let resume = 0; resume < 2; resume++) {
        const stopped = await agentWorld(store, charges, "none", path).resume();
        expect(refusalIn(stopped)?.details).toMatchObject({
          attemptId: charge?.attemptId,
          name: "charge",
        });
      }
      // checkout did not fail: it was not let go on. No outcome is recorded for it.
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
        "tool.completed checkout",
      ]);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

  it("createAgent, a tool between the two: the refusal reaches checkout, and approved, the charge runs once more", async ({
    onTestFinished,
  }) => {
    const { store, charges } = await crashed("deep", "agent", "in-charge", onTestFinished, "deep");
    const charge = (await toolEvents(store)).first("charge");
    const stopped = await agentWorld(store, charges, "none", "deep").resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ attemptId: charge?.attemptId });
    // Neither checkout nor pay (the tool between) failed.
    expect((await toolEvents(store)).outcomes).toEqual([]);

    const ops = await person(store);
    await ops.approve(await unresolvedAttempt(store, charge?.attemptId), "no payment at the bank");
    const resumed = agentWorld(store, charges, "none", "deep");
    expect(await resumed.resume()).toEqual({ answer: "Done: order placed (charged 5)" });
    expect(lines(charges)).toBe(2);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
  });

  for (const path of ["direct", "callback-sub-agent"] as const)
    it(`createAgent${between[path]}: abandoned, the checkout call ends as an abandoned call, the model told why`, async ({
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

      const ops = await person(store);
      await ops.abandon(
        await unresolvedAttempt(store, refusal?.details.attemptId),
        "charged at the bank: order placed by hand",
      );
      const resumed = agentWorld(store, charges, "none", path);
      const outcome = await resumed.resume();
      expect(outcome).toEqual({ answer: expect.stringContaining("order placed by hand") });
      expect(resumed.modelSaw).toEqual([
        "checkout: This tool call did not finish (a crash or an abort cut it off) and was not run again: charge, called inside this tool call, was abandoned: charged at the bank: order placed by hand",
      ]);
      expect(lines(charges)).toBe(1);
      expect((await toolEvents(store)).outcomes).toEqual([
        "attempt.abandoned charge",
        "attempt.abandoned checkout",
      ]);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

  for (const path of ["direct", "callback-sub-agent"] as const)
    it(`createAgent${between[path]}: killed in checkout after the charge, the refusal names checkout's call, which a person can abandon`, async ({
      onTestFinished,
    }) => {
      const { store, charges } = await crashed(
        `after-charge-${path}`,
        "agent",
        "after-charge",
        onTestFinished,
        path,
      );
      expect(lines(charges)).toBe(1);
      const stopped = await agentWorld(store, charges, "none", path).resume();
      const refusal = refusalIn(stopped);
      expect(refusal?.details).toMatchObject({
        name: "checkout",
        toolCallId: "call-checkout",
        inner: { name: "charge", status: "completed" },
      });
      // What the person is asked about is listed as unresolved: the checkout call did not finish.
      const { unresolved } = await inspectSession(store, SESSION);
      expect(unresolved.map((attempt) => [attempt.attemptId, attempt.name])).toEqual([
        [refusal?.details.attemptId, "checkout"],
      ]);
      expect((await toolEvents(store)).outcomes).toEqual(["tool.completed charge"]);

      const ops = await person(store);
      await ops.abandon(
        await unresolvedAttempt(store, refusal?.details.attemptId),
        "the charge went through: order placed",
      );
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: expect.stringContaining("the charge went through: order placed"),
      });
      expect(lines(charges)).toBe(1);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    });

  for (const path of ["direct", "deep", "sub-agent", "callback-sub-agent"] as const)
    it(`createAgent${between[path]}: the person abandons checkout, the outer call, and nothing inside it stays unresolved`, async ({
      onTestFinished,
    }) => {
      const name = `outer-abandon-${path}`;
      const crashedArgs = [path];
      const { store, charges } = await crashed(
        name,
        "agent",
        "in-charge",
        onTestFinished,
        ...crashedArgs,
      );
      // A resume first stops at the charge (checkout and pay run again, and stop there too).
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
      expect((await toolEvents(store)).outcomes.sort()).toEqual(
        [
          "attempt.abandoned charge",
          "attempt.abandoned checkout",
          ...(path === "deep" ? ["attempt.abandoned pay"] : []),
        ].sort(),
      );
    });

  // Killed in the charge (checkout calling it through pay), or in checkout after the charge: the
  // person approves checkout, and the charge runs again with it (in flight, it is approved too,
  // so that the ledger says why it ran again).
  const approvals = [
    { crashAt: "in-charge" as const, path: "deep" as const, agentApproved: ["charge"] },
    { crashAt: "after-charge" as const, path: "direct" as const, agentApproved: [] },
    { crashAt: "in-charge" as const, path: "sub-agent" as const, agentApproved: ["charge"] },
    {
      crashAt: "in-charge" as const,
      path: "callback-sub-agent" as const,
      agentApproved: ["charge"],
    },
  ];
  for (const { crashAt, path, agentApproved } of approvals)
    it(`createAgent, killed ${crashAt}${between[path]}: the person approves checkout, the outer call, and the charge inside it runs once more`, async ({
      onTestFinished,
    }) => {
      const crashedArgs = [path];
      const name = `outer-approve-${crashAt}-${path}`;
      const { store, charges } = await crashed(
        name,
        "agent",
        crashAt,
        onTestFinished,
        ...crashedArgs,
      );
      expect(refusalIn(await agentWorld(store, charges, "none", path).resume())).toBeDefined();

      const ops = await person(store);
      await ops.approve(await unresolvedNamed(store, "checkout"), "no payment at the bank");
      const resumed = agentWorld(store, charges, "none", path);
      expect(await resumed.resume()).toEqual({
        answer: `Done: order placed (${paid(path)}charged 5)`,
      });
      expect(lines(charges)).toBe(2);
      expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
      const events = await runEvents(store, SESSION, RUN);
      const nameOf = new Map(
        events
          .filter((event) => event.type === "tool.requested")
          .map((event) => [event.attemptId, payloadOf<{ name: string }>(event).name]),
      );
      const approved = events.filter((event) => event.type === "attempt.approved");
      expect(
        approved.map((event) => [
          event.actor?.type,
          nameOf.get(event.attemptId),
          payloadOf<{ reason: string }>(event).reason,
        ]),
      ).toEqual([
        ["human", "checkout", "no payment at the bank"],
        ...agentApproved.map((inner) => [
          "agent",
          inner,
          "made inside a tool call a person approved to run again",
        ]),
      ]);
    });

  it("a plain graph: the person abandons checkout (not idempotent), and the charge inside it is abandoned with it", async ({
    onTestFinished,
  }) => {
    const { store, charges } = await crashed(
      "graph-outer",
      "graph",
      "in-charge",
      onTestFinished,
      "risky",
    );
    const ops = await person(store);
    await ops.abandon(
      await unresolvedNamed(store, "checkout"),
      "charged at the bank: placed by hand",
    );

    // The callback cannot answer checkout: the resume stops there, and settles what it made.
    const stopped = await graphWorld(store, charges, "none", false).resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ name: "checkout" });
    expect(lines(charges)).toBe(1);
    expect((await inspectSession(store, SESSION)).unresolved).toEqual([]);
    expect((await toolEvents(store)).outcomes.sort()).toEqual([
      "attempt.abandoned charge",
      "attempt.abandoned checkout",
    ]);
  });

  it("a plain graph (callback only): the refusal is no outcome of checkout, and approved, the charge runs once more", async ({
    onTestFinished,
  }) => {
    const { store, charges } = await crashed("graph", "graph", "in-charge", onTestFinished);
    const charge = (await toolEvents(store)).first("charge");
    const stopped = await graphWorld(store, charges).resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ attemptId: charge?.attemptId });
    expect((await toolEvents(store)).outcomes).toEqual([]);

    const ops = await person(store);
    await ops.approve(await unresolvedAttempt(store, charge?.attemptId), "no payment at the bank");
    const resumed = graphWorld(store, charges);
    expect(await resumed.resume()).toEqual({ answer: "Done: order placed (charged 5)" });
    expect(lines(charges)).toBe(2);
    expect(resumed.modelSaw).toEqual(["checkout: order placed (charged 5)"]);
  });

  // ToolRuns hears of the refusal as checkout ends (handleToolEnd), not as it fails: what
  // checkout returned without the charge is no answer of its call, which ends as refused.
  it("a plain graph (callback only): checkout catches the refusal and returns; that is no outcome of checkout, and approved, the charge runs once more", async ({
    onTestFinished,
  }) => {
    const { store, charges } = await crashed("graph-caught", "graph", "in-charge", onTestFinished);
    const charge = (await toolEvents(store)).first("charge");
    const catching = () => graphWorld(store, charges, "none", true, { checkoutCatches: true });
    const stopping = catching();
    const stopped = await stopping.resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ attemptId: charge?.attemptId });
    expect(stopping.modelSaw).toEqual([]);
    expect((await toolEvents(store)).outcomes).toEqual([]);

    const ops = await person(store);
    await ops.approve(await unresolvedAttempt(store, charge?.attemptId), "no payment at the bank");
    const resumed = catching();
    expect(await resumed.resume()).toEqual({ answer: "Done: order placed (charged 5)" });
    expect(lines(charges)).toBe(2);
    expect(resumed.modelSaw).toEqual(["checkout: order placed (charged 5)"]);
  });

  it("a plain graph (callback only): checkout catches the refusal of the abandoned charge and returns; its call is abandoned with it", async ({
    onTestFinished,
  }) => {
    const name = "graph-caught-abandon";
    const { store, charges } = await crashed(name, "graph", "in-charge", onTestFinished);
    const charge = (await toolEvents(store)).first("charge");
    const ops = await person(store);
    await ops.abandon(await unresolvedAttempt(store, charge?.attemptId), "not charged: cancelled");
    const catching = () => graphWorld(store, charges, "none", true, { checkoutCatches: true });

    const stopping = catching();
    const stopped = await stopping.resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ attemptId: charge?.attemptId });
    expect(stopping.modelSaw).toEqual([]);
    expect((await toolEvents(store)).outcomes).toEqual([
      "attempt.abandoned charge",
      "attempt.abandoned checkout",
    ]);
    const resumed = catching();
    const { toolMessages } = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(await resumed.answerWith(toolMessages)).toEqual({
      answer: expect.stringContaining("not charged: cancelled"),
    });
    expect(lines(charges)).toBe(1);
  });

  it("a plain graph: abandoned, checkout's call is abandoned with it, and the README's recipe gives the model the reason", async ({
    onTestFinished,
  }) => {
    const { store, charges } = await crashed("graph-abandon", "graph", "in-charge", onTestFinished);
    const charge = (await toolEvents(store)).first("charge");
    const ops = await person(store);
    await ops.abandon(await unresolvedAttempt(store, charge?.attemptId), "not charged: cancelled");

    // The callback cannot answer checkout: the resume stops, with checkout's call abandoned.
    const stopped = await graphWorld(store, charges).resume();
    expect(refusalIn(stopped)?.details).toMatchObject({ attemptId: charge?.attemptId });
    expect((await toolEvents(store)).outcomes).toEqual([
      "attempt.abandoned charge",
      "attempt.abandoned checkout",
    ]);

    const resumed = graphWorld(store, charges);
    const { toolMessages } = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(await resumed.answerWith(toolMessages)).toEqual({
      answer: expect.stringContaining("not charged: cancelled"),
    });
    expect(resumed.modelSaw).toEqual([
      "checkout: This tool call did not finish (a crash or an abort cut it off) and was not run again: charge, called inside this tool call, was abandoned: not charged: cancelled",
    ]);
    expect(lines(charges)).toBe(1);
  });
});
