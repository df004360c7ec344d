import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { Command } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { INTERRUPT_PAUSE_KIND } from "./interrupt-pauses.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { lines, payloadOf, runEvents } from "./testing/helpers.js";
import {
  emailAgent,
  type Recipients,
  RUN,
  SESSION,
} from "./testing/unresolved-interrupt.test.data.js";

const scratch = scratchDirectory("langchain-unresolved-interrupt-", { beforeAll, afterAll });

/** A child runs the agent and is SIGKILLed inside send_email, every call of the turn in it. */
async function crashed(
  name: string,
  onTestFinished: TestContext["onTestFinished"],
  recipients: Recipients = "one",
) {
  const db = join(scratch, `${name}.db`);
  const sent = join(scratch, `${name}.sent.log`);
  await crashInChild("unresolved-interrupt:start", db, sent, recipients);
  return { db, sent, store: await openLedger(db, onTestFinished) };
}

interface Interrupt {
  id: string;
  value: Record<string, unknown>;
}

/** The interrupts a resumed invocation returned (`__interrupt__`), or what it threw. */
function interruptsOf(outcome: { result: Record<string, unknown> } | { error: unknown }) {
  if ("error" in outcome) throw outcome.error;
  return (outcome.result.__interrupt__ ?? []) as Interrupt[];
}

function answerOf(outcome: { result: Record<string, unknown> } | { error: unknown }) {
  if ("error" in outcome) throw outcome.error;
  const messages = outcome.result.messages as { content: unknown }[];
  return String(messages.at(-1)?.content);
}

/** The run's decision and tool events, as `type name`. */
async function toolEvents(store: EventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const nameOf = new Map(
    events
      .filter((event) => event.type === "tool.requested")
      .map((event) => [event.attemptId, payloadOf<{ name: string }>(event).name]),
  );
  return {
    events,
    types: events
      .filter((event) => event.type.startsWith("tool.") || event.type.startsWith("attempt."))
      .map((event) => `${event.type} ${nameOf.get(event.attemptId)}`),
  };
}

async function unresolvedIds(store: EventStore) {
  return (await inspectSession(store, SESSION)).unresolved.map((attempt) => attempt.attemptId);
}

describe.concurrent('ledgerMiddleware onUnresolved: "interrupt": a crashed call is asked about through LangGraph', () => {
  it("the resume pauses at an interrupt naming the attempt; the ledger still lists it unresolved, the run paused on it", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("asks", onTestFinished);
    expect(lines(sent)).toBe(1);
    const [attemptId] = await unresolvedIds(store);
    const agent = emailAgent(store, sent);
    const interrupts = interruptsOf(await agent.resume(null));
    expect(interrupts).toHaveLength(1);
    const value = interrupts[0]?.value;
    expect(value).toMatchObject({
      type: "agent-ledger.unresolved-attempt",
      attemptId,
      sessionId: SESSION,
      runId: RUN,
      threadId: "thread-1",
      toolCallId: "call-ann",
      name: "send_email",
      args: { to: "ann" },
    });
    expect(String(value?.question)).toContain("in flight when the process died");
    // Plain JSON, as a UI gets it through any transport.
    expect(JSON.parse(JSON.stringify(value))).toEqual(value);
    expect(lines(sent)).toBe(1);
    expect(await unresolvedIds(store)).toEqual([attemptId]);
    const { events, types } = await toolEvents(store);
    expect(types).toEqual(["tool.requested send_email"]);
    const pause = events.findLast((event) => event.type === "checkpoint.saved");
    expect(pause?.payload).toMatchObject({
      kind: INTERRUPT_PAUSE_KIND,
      awaitingDecision: { calls: [{ name: "send_email", toolCallId: "call-ann" }] },
    });
    const run = (await inspectSession(store, SESSION)).runs.find((view) => view.runId === RUN);
    expect(run?.awaitingDecision?.calls).toEqual([
      { name: "send_email", toolCallId: "call-ann", args: { to: "ann" } },
    ]);
  });

  it("{ approve }: the tool runs exactly once more, as a retry of the approved attempt, and the run completes", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("approve", onTestFinished);
    const [attemptId] = await unresolvedIds(store);
    expect(interruptsOf(await emailAgent(store, sent).resume(null))).toHaveLength(1);
    // The person answers in another process (a new agent on the same thread).
    const agent = emailAgent(store, sent);
    const outcome = await agent.resume(new Command({ resume: { approve: "not in the outbox" } }));
    expect(answerOf(outcome)).toBe("Done: sent to ann");
    expect(lines(sent)).toBe(2);
    const { events, types } = await toolEvents(store);
    expect(types).toEqual([
      "tool.requested send_email",
      "attempt.approved send_email",
      "tool.requested send_email",
      "tool.completed send_email",
    ]);
    const approved = events.find((event) => event.type === "attempt.approved");
    expect(approved?.attemptId).toBe(attemptId);
    expect(payloadOf<{ reason: string }>(approved).reason).toBe("not in the outbox");
    // Recorded by the agent's recorder on a person's word: the person decided.
    expect(approved?.actor).toEqual({ type: "human", id: "langgraph-resume" });
    expect(events.findLast((event) => event.type === "tool.requested")?.retryOf).toBe(attemptId);
    expect(await unresolvedIds(store)).toEqual([]);
  });

  it("{ abandon }: the tool does not run, the model gets the reason, the run completes", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("abandon", onTestFinished);
    const [attemptId] = await unresolvedIds(store);
    const agent = emailAgent(store, sent);
    expect(interruptsOf(await agent.resume(null))).toHaveLength(1);
    // The same agent (handler) goes on after its pause.
    const outcome = await agent.resume(
      new Command({ resume: { abandon: "it was sent", by: "ops@example.com" } }),
    );
    expect(answerOf(outcome)).toContain("it was sent");
    expect(agent.modelSaw).toEqual([expect.stringContaining("send_email: ")]);
    expect(agent.modelSaw[0]).toContain("it was sent");
    expect(lines(sent)).toBe(1);
    const { events, types } = await toolEvents(store);
    expect(types).toEqual(["tool.requested send_email", "attempt.abandoned send_email"]);
    const abandoned = events.find((event) => event.type === "attempt.abandoned");
    expect(abandoned?.attemptId).toBe(attemptId);
    expect(abandoned?.actor).toEqual({ type: "human", id: "ops@example.com" });
    expect(await unresolvedIds(store)).toEqual([]);
  });

  it("an answer that is neither: invalid-argument at $.resume, nothing recorded; a good answer then goes on", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("bad-answer", onTestFinished);
    const [attemptId] = await unresolvedIds(store);
    const agent = emailAgent(store, sent);
    expect(interruptsOf(await agent.resume(null))).toHaveLength(1);
    const before = (await runEvents(store, SESSION, RUN)).length;
    for (const answer of [
      "yes",
      { approve: "" },
      { approve: "a", abandon: "b" },
      { retry: "x" },
      { approve: "a", by: "" },
    ]) {
      const outcome = await agent.resume(new Command({ resume: answer }));
      const error = "error" in outcome ? findLedgerError(outcome.error) : undefined;
      expect(error?.code, JSON.stringify(answer)).toBe("invalid-argument");
      expect(error?.path).toBe("$.resume");
      expect(lines(sent)).toBe(1);
      const { types } = await toolEvents(store);
      expect(types).toEqual(["tool.requested send_email"]);
    }
    // Nothing but pauses and chains: no decision, no call.
    const after = await runEvents(store, SESSION, RUN);
    expect(
      after
        .slice(before)
        .filter((event) => !event.type.startsWith("x.") && event.type !== "checkpoint.saved"),
    ).toEqual([]);
    expect(await unresolvedIds(store)).toEqual([attemptId]);
    const outcome = await agent.resume(
      new Command({ resume: { abandon: "it was sent", by: "ops@example.com" } }),
    );
    expect(answerOf(outcome)).toContain("it was sent");
  });

  it("a tool that asked its own interrupt() before the crash: invoke(null) hands its answer to the question, refused saying so and naming what to resume with", async ({
    onTestFinished,
  }) => {
    const db = join(scratch, "confirmed.db");
    const sent = join(scratch, "confirmed.sent.log");
    await crashInChild("unresolved-interrupt:confirmed", db, sent);
    const store = await openLedger(db, onTestFinished);
    const [attemptId] = await unresolvedIds(store);
    expect(lines(sent)).toBe(1);
    const agent = emailAgent(store, sent, { confirmsFirst: true });
    // No answer given in this invocation: LangGraph hands the question the tool's "yes".
    const outcome = await agent.resume(null);
    const error = "error" in outcome ? findLedgerError(outcome.error) : undefined;
    expect(error?.code).toBe("invalid-argument");
    expect(error?.path).toBe("$.resume");
    expect(error?.message).toContain('not an object, got "yes"');
    expect(error?.message).toContain("If the tool calls interrupt() itself");
    expect(error?.message).toContain(`attemptId: "${attemptId}"`);
    expect(error?.details).toEqual({ attemptId });
    // What the message says to do goes on: the call abandoned, the model gets the reason.
    const answered = await agent.resume(
      new Command({ resume: { abandon: "it was sent", attemptId } }),
    );
    expect(answerOf(answered)).toContain("it was sent");
    expect(lines(sent)).toBe(1);
    expect(await unresolvedIds(store)).toEqual([]);
  });

  it("decided before the resume (core recorder, as the CLI's resolve): no interrupt, the decision is applied", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("decided", onTestFinished);
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "human", id: "ops" },
    });
    const attempt = (await inspectSession(store, SESSION)).unresolved[0];
    if (attempt === undefined) throw new Error("expected an unresolved attempt");
    await person.approve(attempt, "checked: not sent");
    const outcome = await emailAgent(store, sent).resume(null);
    expect(interruptsOf(outcome)).toEqual([]);
    expect(answerOf(outcome)).toBe("Done: sent to ann");
    expect(lines(sent)).toBe(2);
    const { types } = await toolEvents(store);
    expect(types.filter((type) => type.startsWith("attempt."))).toEqual([
      "attempt.approved send_email",
    ]);
  });

  it("decided by the CLI after the interrupt was raised: the resume applies it, asks nothing", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("decided-after", onTestFinished);
    const agent = emailAgent(store, sent);
    expect(interruptsOf(await agent.resume(null))).toHaveLength(1);
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "human", id: "ops" },
    });
    const attempt = (await inspectSession(store, SESSION)).unresolved[0];
    if (attempt === undefined) throw new Error("expected an unresolved attempt");
    await person.abandon(attempt, "checked: sent");
    // Resumed with null (or with an answer, which then goes unused): the ledger's decision holds.
    const outcome = await agent.resume(null);
    expect(interruptsOf(outcome)).toEqual([]);
    expect(answerOf(outcome)).toContain("checked: sent");
    expect(lines(sent)).toBe(1);
  });

  it("two parallel calls in flight: two interrupts, answered in one Command by interrupt id", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("parallel", onTestFinished, "two");
    expect(lines(sent)).toBe(2);
    expect(await unresolvedIds(store)).toHaveLength(2);
    const agent = emailAgent(store, sent, { recipients: "two" });
    const interrupts = interruptsOf(await agent.resume(null));
    expect(interrupts.map((entry) => entry.value.toolCallId).sort()).toEqual([
      "call-ann",
      "call-bob",
    ]);
    const { events: paused } = await toolEvents(store);
    const pause = paused.findLast((event) => event.type === "checkpoint.saved");
    expect(
      payloadOf<{ awaitingDecision: { calls: { toolCallId: string }[] } }>(pause)
        .awaitingDecision.calls.map((call) => call.toolCallId)
        .sort(),
    ).toEqual(["call-ann", "call-bob"]);
    const resume = Object.fromEntries(
      interrupts.map((entry) => [
        entry.id,
        entry.value.toolCallId === "call-ann"
          ? { approve: "ann's is not in the outbox" }
          : { abandon: "bob's went out" },
      ]),
    );
    const outcome = await agent.resume(new Command({ resume }));
    expect(answerOf(outcome)).toBe(
      "Done: sent to ann | This tool call did not finish (a crash or an abort cut it off) and was not run again: bob's went out",
    );
    expect(lines(sent)).toBe(3);
    const { types } = await toolEvents(store);
    expect(types.filter((type) => type.startsWith("attempt.")).sort()).toEqual([
      "attempt.abandoned send_email",
      "attempt.approved send_email",
    ]);
    expect(await unresolvedIds(store)).toEqual([]);
  });

  it("the process dies once the decision is committed: the resume applies it without asking again or recording it twice", async ({
    onTestFinished,
  }) => {
    const { db, store, sent } = await crashed("decision-crash", onTestFinished);
    expect(interruptsOf(await emailAgent(store, sent).resume(null))).toHaveLength(1);
    await crashInChild(
      "unresolved-interrupt:answer",
      db,
      sent,
      "after-decision",
      JSON.stringify({ approve: "not sent" }),
    );
    expect(lines(sent)).toBe(1);
    const outcome = await emailAgent(store, sent).resume(null);
    expect(interruptsOf(outcome)).toEqual([]);
    expect(answerOf(outcome)).toBe("Done: sent to ann");
    expect(lines(sent)).toBe(2);
    const { types } = await toolEvents(store);
    expect(types).toEqual([
      "tool.requested send_email",
      "attempt.approved send_email",
      "tool.requested send_email",
      "tool.completed send_email",
    ]);
  });

  it("without the option the resume still stops with unresolved-attempt; without a checkpointer the option falls back to it", async ({
    onTestFinished,
  }) => {
    const { store, sent } = await crashed("fallbacks", onTestFinished);
    const [attemptId] = await unresolvedIds(store);
    const plain = await emailAgent(store, sent, { onUnresolved: "throw" }).resume(null);
    const refusal =
      "error" in plain ? findLedgerError(plain.error, "unresolved-attempt") : undefined;
    expect(refusal?.details?.attemptId).toBe(attemptId);

    // No checkpointer: LangGraph's interrupt() cannot pause (nothing to resume from). The agent
    // runs again from its input; the ledger answers the model call and refuses the tool call.
    const outcome = await emailAgent(store, sent, { checkpointer: "none" })
      .start()
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    const fallback = findLedgerError(outcome, "unresolved-attempt");
    expect(fallback?.details?.attemptId).toBe(attemptId);
    expect(fallback?.message).toContain("checkpointer");
    expect(lines(sent)).toBe(1);
    expect(await unresolvedIds(store)).toEqual([attemptId]);
  });

  it("the process dies again in the approved retry: the resume asks about the retry, and an answer without its attemptId (LangGraph hands back the earlier one) is not taken for it", async ({
    onTestFinished,
  }) => {
    const { db, store, sent } = await crashed("retry-crash", onTestFinished);
    const [first] = await unresolvedIds(store);
    expect(interruptsOf(await emailAgent(store, sent).resume(null))).toHaveLength(1);
    await crashInChild(
      "unresolved-interrupt:answer",
      db,
      sent,
      "in-tool",
      JSON.stringify({ approve: "not sent" }),
    );
    expect(lines(sent)).toBe(2);
    const [retry] = await unresolvedIds(store);
    expect(retry).not.toBe(first);
    const agent = emailAgent(store, sent);
    const asked = interruptsOf(await agent.resume(null));
    expect(asked.map((entry) => entry.value.attemptId)).toEqual([retry]);
    expect(String(asked[0]?.value.question)).toContain(`answer with attemptId ${retry}`);
    expect(lines(sent)).toBe(2);
    // Without its attemptId the answer could be the earlier one: asked again, nothing recorded.
    const unnamed = interruptsOf(await agent.resume(new Command({ resume: { abandon: "sent" } })));
    expect(unnamed.map((entry) => entry.value.attemptId)).toEqual([retry]);
    const outcome = await agent.resume(
      new Command({ resume: { abandon: "sent twice", attemptId: retry } }),
    );
    expect(answerOf(outcome)).toContain("sent twice");
    expect(lines(sent)).toBe(2);
    const { types } = await toolEvents(store);
    expect(types).toEqual([
      "tool.requested send_email",
      "attempt.approved send_email",
      "tool.requested send_email",
      "attempt.abandoned send_email",
    ]);
    expect(await unresolvedIds(store)).toEqual([]);
  });
});
