import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  inspectSession,
  MemoryEventStore,
  RECORDS_EVERY_CALL_FIELD,
  SessionRecorder,
} from "@agent-ledger/core";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";
import { renderInspection } from "./render-inspection.js";
import {
  pausedAtAgentCallInFlight,
  pausedAtCallInFlight,
  pausedInsideAgentCall,
  recordNestedInFlight,
} from "./session-fixture.test.data.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

const PAUSED =
  'paused at an approval: charge2 [c_inner] {"amount":5} (agent Inner); decide it with the app\'s approval screen, not with agent-ledger resolve';

describe.skipIf(!haveChromium)("the viewer on what a person decides", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  /** Run "main" of session `sessionId`, started, recorded by agent "main". */
  async function mainRun(sessionId: string): Promise<SessionRecorder> {
    const main = new SessionRecorder({
      store,
      sessionId,
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    await main.startRun();
    return main;
  }

  async function open(sessionId: string): Promise<Page> {
    const page = await ui.browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(ui.viewer.sessionUrl(sessionId));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    expect(errors).toEqual([]);
    return page;
  }

  it("shows the run PAUSED with the awaited call and how to decide it, not as a crash with an unresolved call", async () => {
    await pausedInsideAgentCall(store, "paused");
    const page = await open("paused");

    // The runs: paused, the agent run under it too (its agent is the one waiting), none running.
    const runRows = page.locator('[data-testid="run-row"]');
    expect(await runRows.count()).toBe(2);
    for (const row of await runRows.all()) {
      expect(await row.locator(".badge").first().textContent()).toBe("paused");
      expect(await row.getAttribute("class")).toContain("status-paused");
    }
    // In the tree, under the paused run, as `inspect` prints it.
    expect(await page.locator('[data-testid="paused-row"]').textContent()).toContain(`⏸ ${PAUSED}`);
    // The agent call the pause keeps open waits on the decision: it is not lost in a crash.
    const waiting = page.locator('[data-testid="attempt-row"]', { hasText: "tool inner" });
    expect(await waiting.getAttribute("class")).not.toContain("unresolved");
    expect(await waiting.locator(".badge").textContent()).toBe("waiting on a decision");

    // No unresolved box, no resolve command; the paused box says what to decide and where.
    expect(await page.locator('[data-testid="unresolved"]').isHidden()).toBe(true);
    const paused = page.locator('[data-testid="paused"]');
    expect(await paused.textContent()).toContain(
      "1 run paused at an approval, waiting for a person to decide in the app that runs the agent",
    );
    expect(await page.locator('[data-testid="paused-run"]').textContent()).toBe(
      `Run main is ${PAUSED}.`,
    );
    expect(await paused.textContent()).toContain(
      "Open while it waits (not lost in a crash): tool inner [c_outer]",
    );
    expect(await page.locator("main").textContent()).not.toContain("agent-ledger resolve --");
    const header = (await page.locator(".session-head").textContent()) ?? "";
    expect(header).toContain("2 runs (0 completed, 0 running, 2 paused, 0 failed, 0 cancelled)");
    expect(header).toContain("0 unresolved");
    await page.close();
  });

  it("a call in flight at the crash that the pause asks about is shown unresolved, with its resolve command and why", async () => {
    // It was shown as "open while it waits (not lost in a crash)", with no command.
    const { pay } = await pausedAtCallInFlight(store, "crashed-pause");
    const page = await open("crashed-pause");
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool pay" });
    expect(await row.getAttribute("class")).toContain("unresolved");
    const box = page.locator('[data-testid="unresolved"]');
    expect(await box.isHidden()).toBe(false);
    expect(await box.locator("code").textContent()).toBe(
      `agent-ledger resolve --abandon "reason" -- crashed-pause ${pay.attemptId}`,
    );
    expect(await box.textContent()).toContain(
      "1 unresolved attempt: in flight, or left so by a crash or by its caller stopping it",
    );
    expect(await box.textContent()).toContain(
      "It was left in flight by a crash or by its caller stopping it, and may have had its effect; run main is paused asking about it as an approval. Check the effect, then decide it in the app, or here (then resume the run without a state: the decision is applied to it): ",
    );
    const paused = page.locator('[data-testid="paused"]');
    expect(await paused.textContent()).toContain(
      "waiting for a person to decide in the app that runs the agent, or with agent-ledger resolve for a call left in flight by a crash or by its caller stopping it",
    );
    expect(await paused.textContent()).not.toContain("not lost in a crash");
    expect(await page.locator('[data-testid="paused-run"]').textContent()).toContain(
      "left in flight by a crash or by its caller stopping it: it may have had its effect, check it before approving",
    );
    expect(await page.locator(".session-head").textContent()).toContain("1 unresolved");
    await page.close();
  });

  it("shows the runs made inside a call in flight at the crash running, as inspect does, not paused", async () => {
    // They were badged "paused" and counted so, their calls in flight listed as unresolved.
    await pausedAtAgentCallInFlight(store, "crashed-agent");
    const page = await open("crashed-agent");
    const badge = (agent: string) =>
      page
        .locator('[data-testid="run-row"]', { has: page.locator("strong", { hasText: agent }) })
        .locator(".badge")
        .textContent();
    expect(await badge("shop")).toBe("paused");
    expect(await badge("payer")).toBe("running");
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool charge" });
    expect(await row.getAttribute("class")).toContain("unresolved");
    expect(await page.locator(".session-head").textContent()).toContain(
      "2 runs (0 completed, 1 running, 1 paused, 0 failed, 0 cancelled)",
    );
    const printed = renderInspection(await inspectSession(store, "crashed-agent"));
    expect(printed).toMatch(/payer \(payer\) {2}RUNNING /);
    await page.close();
  });

  it("says of a retry which attempt it retries, as inspect does", async () => {
    // A ↻ row said only that it was a later attempt of its call, not of which one.
    const main = await mainRun("retried");
    const first = await main.beforeModelCall({ request: { model: "m", input: "hi" } });
    await main.modelFailed(first, new Error("429"));
    const second = await main.retry(first);
    await main.modelCompleted(second, { text: "hello" });
    const page = await open("retried");
    const rows = page.locator('[data-testid="attempt-row"]');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(0).textContent()).not.toContain("retry of");
    expect(await rows.nth(1).locator(".indent").textContent()).toContain("↻");
    expect(await rows.nth(1).locator('[data-testid="retry-of"]').textContent()).toBe(
      ` (retry of ${first.attemptId})`,
    );
    const printed = renderInspection(await inspectSession(store, "retried"));
    expect(printed).toContain(`(retry of ${first.attemptId})`);
    await page.close();
  });

  it("says of a run open with nothing in flight what inspect says: it cannot tell a live run from a dead one, and what to do", async () => {
    // Once its only call was decided, the run read "running" with no next step.
    const { pay } = await pausedAtCallInFlight(store, "decided-open");
    const person = await SessionRecorder.resume({
      store,
      sessionId: "decided-open",
      runId: "main",
      actor: { type: "human", id: "oncall" },
    });
    await person.abandon(pay, "paid: the bank shows it");
    const page = await open("decided-open");
    const box = page.locator('[data-testid="open-runs"]');
    await box.waitFor();
    const printed = renderInspection(await inspectSession(store, "decided-open")).split("\n");
    const heading = printed.find((line) => line.startsWith("○ "));
    expect(heading).toContain("inspect cannot tell a run whose process is still at work");
    expect(await box.locator("h2").textContent()).toBe(heading?.replace(/:$/, ""));
    const said = printed.find((line) => line.startsWith("   run main: "))?.slice(13);
    expect(await box.locator('[data-testid="open-run"]').textContent()).toBe(`Run main: ${said}.`);
    expect(await page.locator('[data-testid="unresolved"]').isHidden()).toBe(true);
    expect(await page.locator('[data-testid="paused"]').isHidden()).toBe(true);
    await page.close();
  });

  it("once a call is made in its tree, is running again, and what is in flight is unresolved", async () => {
    const { inner } = await pausedInsideAgentCall(store, "decided");
    const page = await open("decided");
    await page.locator('[data-testid="paused-row"]').waitFor();
    // The app resumed the run with the decision and died while the charge ran.
    const charge = await inner.beforeToolCall({
      toolCallId: "c_inner",
      name: "charge2",
      args: { amount: 5 },
    });
    const box = page.locator('[data-testid="unresolved"]');
    await expect.poll(() => box.isHidden(), { timeout: 10_000 }).toBe(false);
    expect(await page.locator('[data-testid="paused"]').isHidden()).toBe(true);
    expect(await page.locator('[data-testid="paused-row"]').count()).toBe(0);
    expect(await box.locator("code").textContent()).toBe(
      `agent-ledger resolve --abandon "reason" -- decided ${charge.attemptId}`,
    );
    const badges = await page.locator('[data-testid="run-row"] .badge').allTextContents();
    expect(badges).toEqual(["running", "running"]);
    await page.close();
  });

  it("says under a call to decide what inspect says under its resolve command: what the reason does, and --approve", async () => {
    // The page showed the bare `resolve --abandon "reason"` command: not that the reason is what
    // the agent's model reads, nor that --approve makes the call again if it did not take effect.
    const main = await mainRun("to-decide");
    const email = await main.beforeToolCall({
      toolCallId: "c-mail",
      name: "send_email",
      args: { to: "bob@example.com" },
      effect: { kind: "write", idempotent: false },
    });
    const handoff = await main.beforeToolCall({
      toolCallId: "c-hand",
      name: "transfer_to_refunds",
      args: {},
      effect: { kind: "write", idempotent: false },
      metadata: { handoffTo: "Refunds" },
    });
    const printed = renderInspection(await inspectSession(store, "to-decide")).split("\n");
    const hints = printed
      .map((line, at) => (line.includes("next: check the effect, then: ") ? printed[at + 1] : ""))
      .filter((line) => line !== "")
      .map((line) => (line ?? "").trim());
    expect(hints).toHaveLength(2);
    expect(hints[0]).toMatch(/^replace "reason" with what you found: the agent's model reads it/);
    expect(hints[1]).toMatch(
      /^replace "reason" with what you found: this call hands off to Refunds/,
    );
    const said = hints.map((hint) => `${hint.charAt(0).toUpperCase()}${hint.slice(1)}.`);

    const page = await open("to-decide");
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(2);
    for (const [at, attempt] of [email, handoff].entries()) {
      const item = items.nth(at);
      expect(await item.textContent()).toContain(
        `Check the effect, then: agent-ledger resolve --abandon "reason" -- to-decide ${attempt.attemptId}`,
      );
      expect(await item.locator('[data-testid="resolve-hint"]').textContent()).toBe(said[at]);
    }
    await page.close();
  });

  it("says why an agent call declared idempotent is a decision when no child run of it records every call", async () => {
    const main = await mainRun("agent-call");
    const call = await main.beforeToolCall({
      toolCallId: "c-w",
      name: "writer_tool",
      args: {},
      effect: { kind: "none", idempotent: true },
      metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true },
    });
    const page = await open("agent-call");
    const box = page.locator('[data-testid="unresolved"]');
    expect(await box.textContent()).toContain(
      `What its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it: check the effect, then: agent-ledger resolve --abandon "reason" -- agent-call ${call.attemptId}`,
    );
    await page.close();
  });

  it("says of an agent call declared not idempotent only to check its effect, as inspect does, even when its child run records every call", async () => {
    // The page said no child run of it records every call, which its child run did.
    const main = await mainRun("agent-call-not-idempotent");
    const call = await main.beforeToolCall({
      toolCallId: "c-w",
      name: "writer_tool",
      args: {},
      effect: { kind: "unknown", idempotent: false },
      metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true },
    });
    const writer = main.child({
      runId: "writer",
      actor: { type: "agent", id: "writer_tool" },
      causedByEventId: call.requestedEventId,
    });
    await writer.startRun({ [RECORDS_EVERY_CALL_FIELD]: true });
    const page = await open("agent-call-not-idempotent");
    const box = await page.locator('[data-testid="unresolved"]').textContent();
    expect(box).toContain(
      `Check the effect, then: agent-ledger resolve --abandon "reason" -- agent-call-not-idempotent ${call.attemptId}`,
    );
    expect(box).not.toContain("no child run of it says it records every call");
    await page.close();
  });

  it("says of an approved call what inspect says: who approved it, when and why, and that the next resume makes it again", async () => {
    // The page said "The next resume makes this call again by itself: nothing to decide.", with
    // no approver, time or reason, and the tree showed a bare UNRESOLVED badge.
    const main = await mainRun("approved");
    const pay = await main.beforeToolCall({
      toolCallId: "c-pay",
      name: "pay",
      args: { cents: 500 },
      effect: { kind: "write", idempotent: false },
    });
    const person = await SessionRecorder.resume({
      store,
      sessionId: "approved",
      runId: "main",
      actor: { type: "human", id: "alice" },
    });
    await person.approve(pay, "bank says the payment never arrived");
    const printed = renderInspection(await inspectSession(store, "approved")).split("\n");
    const approvedLine = printed.find((line) => line.trim().startsWith("approved for a re-run"));
    expect(approvedLine).toMatch(
      /^ {5}approved for a re-run by alice at \S+: "bank says the payment never arrived"; the next resume makes the call again$/,
    );
    expect(printed).toContain("     next: nothing to decide");
    const said = (approvedLine ?? "").trim();
    const inTree = said.replace("; the next resume makes the call again", "");
    expect(
      printed.some(
        (line) =>
          line.includes(`!! UNRESOLVED`) && line.endsWith(`${inTree}  attempt ${pay.attemptId}`),
      ),
    ).toBe(true);

    const page = await open("approved");
    const item = page.locator('[data-testid="unresolved"] li');
    expect(await item.locator('[data-testid="approval"]').textContent()).toBe(
      `${said.charAt(0).toUpperCase()}${said.slice(1)}.`,
    );
    expect(await item.textContent()).toContain("Next: nothing to decide.");
    expect(await item.textContent()).not.toContain("by itself");
    expect(await item.locator("code").count()).toBe(0);
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool pay" });
    expect(await row.locator(".badge").textContent()).toBe("UNRESOLVED");
    expect(await row.locator('[data-testid="approval"]').textContent()).toBe(` ${inTree}`);
    await page.close();
  });

  it("says why there is nothing to decide about a call made again by itself, in inspect's words", async () => {
    const main = await mainRun("made-again");
    await main.beforeToolCall({
      toolCallId: "c-read",
      name: "lookup",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    const printed = renderInspection(await inspectSession(store, "made-again"));
    expect(printed).toContain(
      "next: nothing to decide; idempotent, so the next resume makes this call again by itself",
    );
    const page = await open("made-again");
    const item = page.locator('[data-testid="unresolved"] li');
    expect(await item.textContent()).toContain(
      "Next: nothing to decide; idempotent, so the next resume makes this call again by itself.",
    );
    expect(await item.locator('[data-testid="approval"]').count()).toBe(0);
    await page.close();
  });

  it("says an abandoned call's time is from its request to the abandonment, as inspect does", async () => {
    const main = await mainRun("abandoned-time");
    const charge = await main.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await main.abandon(charge, "charged by phone");
    const printed = renderInspection(await inspectSession(store, "abandoned-time"));
    const said = /abandoned {2}(\S+ \S+ after it was requested)/.exec(printed)?.[1];
    expect(said).toMatch(/ after it was requested$/);
    const page = await open("abandoned-time");
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool charge" });
    expect(await row.locator(".badge").textContent()).toBe("abandoned");
    expect(await row.textContent()).toContain(`abandoned ${said}`);
    await page.close();
  });

  it("says a call declined before it started never ran, as inspect does", async () => {
    const main = await mainRun("declined-call");
    await main.declineToolCall(
      { toolCallId: "r1", name: "refund", args: { order: "42" } },
      "denied at its approval request: not this order",
    );
    const printed = renderInspection(await inspectSession(store, "declined-call"));
    expect(printed).toContain("abandoned  declined before it ran");
    const page = await open("declined-call");
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool refund" });
    expect(await row.locator(".badge").textContent()).toBe("abandoned");
    expect(await row.textContent()).toContain("abandoned declined before it ran");
    expect(await row.textContent()).not.toContain("after it was requested");
    await page.close();
  });

  it("an agent call that is a decision itself comes first, as inspect says: the call inside it waits on it", async () => {
    const { outer } = await recordNestedInFlight(store, "outer-first");
    const page = await open("outer-first");
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).locator("code").textContent()).toBe(
      `agent-ledger resolve --abandon "reason" -- outer-first ${outer.attemptId}`,
    );
    expect(await items.nth(1).locator("code").count()).toBe(0);
    expect(await items.nth(1).textContent()).toContain(
      `Made inside an agent's call that is a decision itself (attempt ${outer.attemptId} on run main), which the next resume asks about first: decide that call first. Abandoned, it abandons this call too; approved, its agent runs again and this call is decided then.`,
    );
    await page.close();
  });

  it("a call in flight inside a tool call that ended is settled with it, not a person's to decide", async () => {
    const main = new SessionRecorder({
      store,
      sessionId: "ended-outer",
      runId: "main",
      actor: { type: "agent", id: "assistant" },
    });
    await main.startRun();
    const check = await main.beforeToolCall({ toolCallId: "call_0", name: "check", args: {} });
    const inside = main.child({
      runId: "inside",
      actor: { type: "agent", id: "assistant" },
      causedByEventId: check.requestedEventId,
    });
    await inside.startRun();
    await inside.beforeToolCall({
      toolCallId: "c0",
      name: "charge",
      args: { cents: 700 },
      effect: { kind: "write", idempotent: false },
    });
    await main.toolCompleted(check, "ok");
    const page = await open("ended-outer");
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(1);
    expect(await items.nth(0).locator("code").count()).toBe(0);
    expect(await items.nth(0).textContent()).toContain(
      "Nothing to decide: settled with its tool call check (call_0), which completed: the next resume settles it (abandons it: its answer was never recorded).",
    );
    await page.close();
  });

  it("the command that settles a call in flight inside an abandoned tool call is a block to copy, in inspect's words", async () => {
    // It sat inline in the sentence, a double-click selecting one word of it.
    const main = new SessionRecorder({
      store,
      sessionId: "abandoned-outer",
      runId: "main",
      actor: { type: "agent", id: "assistant" },
    });
    await main.startRun();
    const check = await main.beforeToolCall({ toolCallId: "call_0", name: "check", args: {} });
    const inside = main.child({
      runId: "inside",
      actor: { type: "agent", id: "assistant" },
      causedByEventId: check.requestedEventId,
    });
    await inside.startRun();
    await inside.beforeToolCall({
      toolCallId: "c0",
      name: "charge",
      args: { cents: 700 },
      effect: { kind: "write", idempotent: false },
    });
    await main.abandon(check, "charged by phone");
    const page = await open("abandoned-outer");
    const item = page.locator('[data-testid="unresolved"] li');
    const command = `agent-ledger resolve --abandon 'charged by phone' --run=main -- abandoned-outer ${check.attemptId}`;
    expect(await item.locator(".command code").textContent()).toBe(command);
    expect(await item.locator('[data-testid="copy-command"]').count()).toBe(1);
    const printed = renderInspection(await inspectSession(store, "abandoned-outer"));
    const said = `nothing to decide: settled with its tool call check (call_0), which was abandoned: run ${command} again to settle it now, or the next resume does`;
    expect(printed).toContain(`next: ${said}\n`);
    // Read without the copy button's word.
    const shown = (await item.textContent())?.replace(`${command}copy`, command);
    expect(shown).toContain(`N${said.slice(1)}.`);
    await page.close();
  });
});
