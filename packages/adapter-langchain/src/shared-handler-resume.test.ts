import { readWholeRun } from "@agent-ledger/core";
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { threadConfig } from "./testing/helpers.js";
import {
  attempts,
  expectAgentResumed,
  expectBRecordedOnce,
  graphOf,
  openLedger,
  outcomeOf,
  pauseAndResume,
  RUN,
  SESSION,
  type Shape,
  startB,
  toolCallsOf,
  world,
} from "./testing/shared-handler-resume.test.data.js";

// README ("Several threads on one handler", and the resume after interrupt()): one handler may
// serve several threads, and a thread resumed after a pause meets the calls it recorded before
// it (answered from the ledger, or refused), never runs them twice: also while another
// thread's invocation is in progress on the handler, whose calls are recorded once each.
describe("a thread resumed after interrupt() while another thread runs on the same handler", () => {
  const shapes: { shape: Shape; resumed: object }[] = [
    // The plain graph's callback cannot answer send: the resume stops, as it does alone.
    { shape: "tool-node", resumed: { refused: "unresolved-attempt", name: "send" } },
    { shape: "agent", resumed: { answer: "done: sent to A | yes" } },
    // send ran inside book: the refusal names book (README: a call made inside a tool).
    { shape: "agent-nested", resumed: { refused: "unresolved-attempt", name: "book" } },
  ];
  for (const { shape, resumed } of shapes)
    it(`${shape}: send, done before the pause, is not sent again; B's calls are recorded once`, async () => {
      const alone = await pauseAndResume(shape, false);
      const busy = await pauseAndResume(shape, true);
      expect(alone).toMatchObject({ interrupts: 1, resumed, sent: ["A"] });
      expect(busy).toMatchObject({ interrupts: 1, resumed, sent: ["A"] });
      // A's calls in the ledger are what they are when A is resumed alone: send's one attempt,
      // completed before the pause.
      const sends = toolCallsOf(busy.recorded, "A").filter((call) => call.name === "send");
      expect(sends).toEqual([
        expect.objectContaining({ outcomes: ["tool.completed"], retryOf: undefined }),
      ]);
      expect(toolCallsOf(busy.recorded, "A")).toEqual(toolCallsOf(alone.recorded, "A"));
      expect(busy.otherAnswer).toEqual({ answer: "done: slow done" });
      expectBRecordedOnce(busy.recorded);
    });

  it("B's model call, in flight while A is resumed, is completed once: no resume takes it for a call a crash left", async () => {
    const busy = await pauseAndResume("agent", true, "model");
    expect(busy).toMatchObject({ resumed: { answer: "done: sent to A | yes" }, sent: ["A"] });
    expect(busy.otherAnswer).toEqual({ answer: "done: slow done" });
    expectBRecordedOnce(busy.recorded);
    expect(busy.recorded.flatMap((call) => call.outcomes)).not.toContain("attempt.abandoned");
    expectAgentResumed(busy.recorded, "A");
  });

  it("B's tool call, in flight when A's resume starts and done during it, is completed once, in its step", async () => {
    const store = await openLedger("done-during-resume");
    try {
      const current = world("tool");
      const { handler, graph } = graphOf(store, "agent", current);
      const other = startB(graph, handler, current);
      await other.held;
      await graph.invoke({ messages: [new HumanMessage("A")] }, threadConfig(handler, "A"));
      // A's confirm, run again by the resume, lets B's slow end and waits for B's invocation to
      // end (B's model call after it included) before it answers.
      let otherAnswer: unknown;
      current.onResume = async () => {
        current.release();
        otherAnswer = await other.outcome;
      };
      const resumed = await outcomeOf(
        graph.invoke(new Command({ resume: "yes" }), threadConfig(handler, "A")),
      );
      expect(resumed).toEqual({ answer: "done: sent to A | yes" });
      expect(otherAnswer).toEqual({ answer: "done: slow done" });
      expect(current.sent).toEqual(["A"]);
      const recorded = await attempts(store);
      expectBRecordedOnce(recorded);
      expectAgentResumed(recorded, "A");
      // slow was requested before A's resume started, and ended after A's resume ran confirm
      // again (its second request).
      const events = await readWholeRun(store, { sessionId: SESSION, runId: RUN });
      const requestOf = (toolCallId: string) =>
        events.filter(
          (event) =>
            event.type === "tool.requested" &&
            (event.payload as { toolCallId?: string }).toolCallId === toolCallId,
        );
      const [slow] = requestOf("b-slow");
      const confirmAgain = requestOf("a-confirm")[1];
      const slowEnd = events.find(
        (event) => event.type === "tool.completed" && event.attemptId === slow?.attemptId,
      );
      expect(slow?.seq).toBeLessThan(confirmAgain?.seq ?? 0);
      expect(slowEnd?.seq).toBeGreaterThan(confirmAgain?.seq ?? Number.POSITIVE_INFINITY);
    } finally {
      await store.close();
    }
  });

  const both: { shape: Shape; resumed: (thread: string) => object }[] = [
    { shape: "agent", resumed: (thread) => ({ answer: `done: sent to ${thread} | yes` }) },
    { shape: "agent-nested", resumed: () => ({ refused: "unresolved-attempt", name: "book" }) },
  ];
  for (const { shape, resumed } of both)
    it(`${shape}: two paused threads resumed at once while B runs: each one's send goes out once`, async () => {
      const store = await openLedger(`two-resumed-${shape}`);
      try {
        const current = world("tool");
        const { handler, graph } = graphOf(store, shape, current);
        const other = startB(graph, handler, current);
        await other.held;
        for (const thread of ["A", "C"])
          await graph.invoke(
            { messages: [new HumanMessage(thread)] },
            threadConfig(handler, thread),
          );
        const outcomes = await Promise.all(
          ["A", "C"].map((thread) =>
            outcomeOf(graph.invoke(new Command({ resume: "yes" }), threadConfig(handler, thread))),
          ),
        );
        current.release();
        expect(outcomes).toEqual([resumed("A"), resumed("C")]);
        expect(current.sent).toEqual(["A", "C"]);
        expect(await other.outcome).toEqual({ answer: "done: slow done" });
        const recorded = await attempts(store);
        for (const thread of ["A", "C"]) {
          const sends = toolCallsOf(recorded, thread).filter((call) => call.name === "send");
          expect(sends.map((call) => call.outcomes)).toEqual([["tool.completed"]]);
          if (shape === "agent") expectAgentResumed(recorded, thread);
        }
        expectBRecordedOnce(recorded);
      } finally {
        await store.close();
      }
    });
});
