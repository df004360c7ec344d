import { type Attempt, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

const CALLS = 3000;

/**
 * A long session: a call retried 300 times, then CALLS tool calls, then an agent used as a tool
 * (the 50th call) whose run, recorded last, made a model call and a tool call it asked for,
 * still in flight. Nothing after the first few hundred events is in the page's first window.
 */
async function recordLongSession(store: MemoryEventStore, sessionId: string) {
  const main = new SessionRecorder({
    store,
    sessionId,
    runId: "main",
    actor: { type: "agent", id: "main" },
  });
  await main.startRun();
  let flaky = await main.beforeToolCall({ toolCallId: "f", name: "flaky", args: {} });
  for (let index = 1; index < 300; index++) flaky = await main.retry(flaky);
  await main.toolCompleted(flaky, "at last");
  const calls: Attempt[] = [];
  for (let index = 0; index < CALLS; index += 100) {
    const batch = await Promise.all(
      Array.from({ length: 100 }, (_, offset) =>
        main.beforeToolCall({
          toolCallId: `c${index + offset}`,
          name: `step_${index + offset}`,
          args: { index: index + offset },
        }),
      ),
    );
    await Promise.all(batch.map((call) => main.toolCompleted(call, "ok")));
    calls.push(...batch);
  }
  const agent = main.child({
    runId: "agent",
    actor: { type: "agent", id: "helper" },
    causedByEventId: (calls[49] as Attempt).requestedEventId,
  });
  await agent.startRun();
  const model = await agent.beforeModelCall({ request: { model: "m" } });
  const answer = await agent.modelCompleted(model, { toolCalls: [{ id: "w", name: "write" }] });
  await agent.beforeToolCall({ toolCallId: "w", name: "write_late", args: { late: true } });
  const { events } = await store.readSession({ sessionId, after: 0 });
  return { eventCount: events.length, answer };
}

describe.skipIf(!haveChromium)("the viewer on a long session", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  afterAll(async () => {
    await store.close();
  });

  async function open(sessionId: string): Promise<Page> {
    const page = await ui.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(ui.viewer.sessionUrl(sessionId));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    expect(errors).toEqual([]);
    return page;
  }

  it("shows the first events and a part of the tree, and the rest on request", async () => {
    const { eventCount } = await recordLongSession(store, "long");
    const page = await open("long");
    const rows = page.locator("tr.event-row");
    // A window of the events, never all of them at once: a row each held the tab for minutes.
    await expect.poll(() => rows.count()).toBe(500);
    const more = page.locator('[data-testid="more-events"]');
    await expect
      .poll(() => more.textContent())
      .toContain(`500 of ${eventCount.toLocaleString("en-US")} events`);
    await more.locator("button", { hasText: "show the next 2,000" }).click();
    await expect.poll(() => rows.count()).toBe(2500);
    expect(await rows.last().locator("td").first().textContent()).toBe("2500");

    // The tree: the retried call's first and last ten attempts, then the first 100 steps.
    const attempts = page.locator('[data-testid="attempt-row"]');
    const flaky = attempts.filter({ hasText: "tool flaky [f]" });
    expect(await flaky.count()).toBe(20);
    const moreAttempts = page.locator('[data-testid="more-attempts"]');
    expect(await moreAttempts.count()).toBe(1);
    expect(await page.locator(".more-row").first().textContent()).toContain(
      "… 280 more attempts of this call",
    );
    expect(await attempts.filter({ hasText: "step_" }).count()).toBe(99);
    const moreSteps = page.locator('[data-testid="more-steps"]');
    expect(await moreSteps.textContent()).toBe("show the next 1,000");
    // Well under the 100k nodes the page held for this many events.
    const nodes = await page.locator("*").count();
    expect(nodes).toBeLessThan(30_000);
    await moreAttempts.click();
    await expect.poll(() => flaky.count()).toBe(300);
    await moreSteps.click();
    await expect.poll(() => attempts.filter({ hasText: "step_" }).count()).toBe(1099);
    await page.close();
  });

  it("names and shows causes and requests the list does not hold yet", async () => {
    const { answer } = await recordLongSession(store, "late-causes");
    const page = await open("late-causes");
    // The agent's run, recorded last, under the 50th call; its causes named as the list would.
    const agentRun = page.locator('[data-testid="run-row"]', { hasText: "helper" });
    await agentRun.waitFor();
    expect(await agentRun.locator(".cause").textContent()).toMatch(
      /^ ← caused by tool\.requested step_49 \(#\d+, main:\d+\)$/,
    );
    const late = page.locator('[data-testid="attempt-row"]', { hasText: "write_late" });
    expect(await late.locator(".cause").textContent()).toBe(
      ` ← caused by model.completed (#${answer.commitCursor}, agent:2)`,
    );
    // A click on a call shows its request, fetched; its cause's link shows the cause.
    await late.click();
    const detail = page.locator('[data-testid="event-detail"]');
    await expect.poll(() => detail.locator("h3").textContent()).toMatch(/^#\d+ tool\.requested$/);
    expect(await detail.locator("pre.payload").textContent()).toContain('"late": true');
    await detail.locator("a", { hasText: "caused by model.completed" }).click();
    await expect
      .poll(() => detail.locator("h3").textContent())
      .toBe(`#${answer.commitCursor} model.completed`);
    expect(await detail.locator("pre.payload").textContent()).toContain('"write"');
    // The unresolved box's call too.
    await page.locator('[data-testid="unresolved"] li').click();
    await expect.poll(() => detail.locator("h3").textContent()).toMatch(/tool\.requested$/);
    await page.close();
  });

  it("shows a call in flight past the steps shown, in its place, without a click", async () => {
    // It was hidden behind "show the next 1,000": the tree showed no UNRESOLVED row at all.
    const recorder = new SessionRecorder({
      store,
      sessionId: "late-crash",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    for (let index = 0; index < 150; index++) {
      const call = await recorder.beforeToolCall({
        toolCallId: `c${index}`,
        name: `done_${index}`,
        args: {},
      });
      await recorder.toolCompleted(call, "ok");
    }
    await recorder.beforeToolCall({ toolCallId: "last", name: "charge", args: {} });
    const page = await open("late-crash");
    const attempts = page.locator('[data-testid="attempt-row"]');
    const inFlight = page.locator('[data-testid="attempt-row"].unresolved');
    await inFlight.waitFor();
    expect(await inFlight.textContent()).toContain("tool charge [last]");
    expect(await attempts.filter({ hasText: "done_" }).count()).toBe(100);
    // The steps between stay behind their control, which shows them in their place.
    const rows = page.locator('[data-testid="runs"] > .row');
    const texts = await rows.allTextContents();
    const gap = texts.findIndex((text) => text.includes("… 50 more steps of this run"));
    expect(gap).toBeGreaterThan(0);
    expect(texts[gap + 1]).toContain("tool charge [last]");
    await page.locator('[data-testid="more-steps"]').click();
    await expect.poll(() => attempts.filter({ hasText: "done_" }).count()).toBe(150);
    expect(await page.locator('[data-testid="more-steps"]').count()).toBe(0);
    expect(await attempts.last().textContent()).toContain("tool charge [last]");
    await page.close();
  });

  it("lists the first 100 unresolved attempts, and all of them on request", async () => {
    // A crash in a batch of parallel calls leaves them all in flight.
    const recorder = new SessionRecorder({
      store,
      sessionId: "batch-crash",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await Promise.all(
      Array.from({ length: 150 }, (_, index) =>
        recorder.beforeToolCall({ toolCallId: `c${index}`, name: `send_${index}`, args: {} }),
      ),
    );
    const page = await open("batch-crash");
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(100);
    expect(await page.locator('[data-testid="unresolved"] h2').textContent()).toContain(
      "150 unresolved attempts",
    );
    await page.locator('[data-testid="all-unresolved"]').click();
    await expect.poll(() => items.count()).toBe(150);
    await page.close();
  });

  it("asks for the inspection of a growing session no sooner than the last one took to come", async () => {
    const recorder = new SessionRecorder({
      store,
      sessionId: "growing",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({ toolCallId: "c1", name: "slow", args: {} });
    const page = await ui.browser.newPage();
    // Each inspection takes 1.2 s to come (a long session, a busy store), at least: held here,
    // where each request is also timed as it is asked. Both times of a gap come from this same
    // handler: a start from the request event and an end from the requestfinished event reached
    // this process each late by its own lag on a busy machine, which made the gap look shorter
    // than the page waited (1,208 ms after one that looked 1,367 ms long).
    const DELAY = 1200;
    const asked: number[] = [];
    await page.route(
      (url) => url.pathname === "/api/session",
      async (route) => {
        asked.push(Date.now());
        await new Promise((resolve) => setTimeout(resolve, DELAY));
        await route.continue();
      },
    );
    await page.goto(ui.viewer.sessionUrl("growing"));
    await page.locator('[data-testid="attempt-row"]').waitFor();
    // The session grows all the while: every poll (200 ms) finds something new.
    const until = Date.now() + 6000;
    while (Date.now() < until) {
      await recorder.recordInput("more");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(asked.length).toBeGreaterThan(2);
    // The next request no sooner than the last one's DELAY to come, then as long again: a page
    // polling 200 ms after each answer asked again 1.4 s after the last.
    for (let index = 1; index < asked.length; index++) {
      const gap = (asked[index] as number) - (asked[index - 1] as number);
      expect(gap, `request ${index}`).toBeGreaterThanOrEqual(DELAY + 0.9 * DELAY);
    }
    await page.close();
  });
});
