import { statSync } from "node:fs";
import { join } from "node:path";
import { inspectSession } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium } from "./chromium.test.data.js";
import {
  INJECTION,
  recordNestedInFlight,
  runPasted,
  startBin,
} from "./session-fixture.test.data.js";
import { MADE_AGAIN, viewerInChromium } from "./viewer.test.data.js";

const directory = scratchDirectory("agent-ledger-viewer-", { beforeAll, afterAll });
const storeUrl = `sqlite:${join(directory, "ledger.db")}`;

describe.skipIf(!haveChromium)("agent-ledger serve in Chromium", () => {
  const viewer = viewerInChromium({ storeUrl });

  it("binds 127.0.0.1 on a free port and sends a strict CSP", async () => {
    expect(viewer.sessionUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#\/session\/viewer-session$/);
    const response = await fetch(new URL("/", viewer.sessionUrl));
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("shows the sessions list, the run tree, the unresolved attempt and payloads as text", async () => {
    const page = await viewer.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    await page.goto(new URL("/", viewer.sessionUrl).toString());
    await page.locator(".session-link", { hasText: viewer.demo.sessionId }).click();
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();

    const runRows = page.locator('[data-testid="run-row"]');
    await expect.poll(() => runRows.count()).toBe(2);
    await expect.poll(() => runRows.nth(1).textContent()).toContain("availability-checker");
    expect(await runRows.nth(1).textContent()).toContain("caused by tool.requested find_slots");
    // The tokens the model calls reported, as inspect prints them: on the run, its call, the
    // session's header.
    expect(await runRows.nth(0).textContent()).toContain("42 in / 17 out tokens");
    expect(await page.locator(".session-head").textContent()).toContain("42 in / 17 out tokens");
    const modelRow = page.locator('[data-testid="attempt-row"]', { hasText: "model" }).first();
    expect(await modelRow.textContent()).toContain("42 in / 17 out tokens");
    const unresolved = page.locator('[data-testid="unresolved"]');
    expect(await unresolved.textContent()).toContain(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- ${viewer.demo.sessionId} ${viewer.demo.unresolvedAttemptId}`,
    );
    // What the call was and whether it writes, as inspect says: what the person must check.
    expect(await unresolved.textContent()).toContain(
      `effect: write, not idempotent · request: {"name":"book_table","args":{"slot":"20:00"},`,
    );
    const unresolvedRow = page.locator('[data-testid="attempt-row"].unresolved');
    expect(await unresolvedRow.textContent()).toContain("tool book_table [call-2]UNRESOLVED");

    // The injection payload: shown as text, never run or rendered.
    await page.locator("tr.event-row", { hasText: "input.received" }).click();
    const payload = page.locator('[data-testid="event-detail"] pre.payload');
    await payload.waitFor();
    expect(await payload.textContent()).toContain(INJECTION.replace(/"/g, '\\"'));
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("main img, main script, #bold").count()).toBe(0);

    // Blobs referenced by an event are resolved and shown as text too.
    await page.locator("tr.event-row", { hasText: "evidence.recorded" }).click();
    const blob = page.locator('[data-testid="event-detail"] pre.blob');
    await blob.waitFor();
    expect(await blob.textContent()).toBe("menu.txt: soup <b>of the day</b>");

    const screenshot = join(directory, "viewer-session.png");
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(statSync(screenshot).size).toBeGreaterThan(10_000);
    console.log(`[agent-ledger] viewer screenshot: ${screenshot}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("updates live while the session grows", async () => {
    const page = await viewer.browser.newPage();
    await page.goto(viewer.sessionUrl);
    await page.locator('[data-testid="attempt-row"].unresolved').waitFor();
    const rows = page.locator("tr.event-row");
    const before = await rows.count();
    await viewer.demo.recorder.abandon(
      {
        stepId: "x",
        attemptId: viewer.demo.unresolvedAttemptId,
        requestedEventId: "y",
        toolCallId: "call-2",
      },
      "booked by phone <i>really</i>",
    );
    await page
      .locator("tr.event-row", { hasText: "attempt.abandoned" })
      .waitFor({ timeout: 10_000 });
    expect(await rows.count()).toBe(before + 1);
    await expect
      .poll(() => page.locator('[data-testid="attempt-row"].unresolved').count(), {
        timeout: 10_000,
      })
      .toBe(0);
    expect(await page.locator('[data-testid="unresolved"]').isHidden()).toBe(true);
    await page.close();
  });

  it("serve --session for a session not written yet: the page waits for its first events, then shows it", async () => {
    // The page threw "unknown session" once and never asked again, where serve had said its page
    // would fill once the session had events.
    const later = await startBin(
      ["--store", storeUrl, "serve", "--poll-ms", "200", "--session", "written-later"],
      /session: (http:\/\/\S+)\n/,
    );
    try {
      await expect
        .poll(() => later.errors())
        .toContain(
          'no session "written-later" in the store (yet): its page waits for its first events and shows the session once they come',
        );
      const page = await viewer.browser.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      await page.goto(later.match[1] as string);
      const waiting = page.locator('[data-testid="waiting-for-events"]');
      await waiting.waitFor();
      expect(await waiting.textContent()).toContain("No events yet: waiting for its first events");
      expect(await page.locator("main h1").textContent()).toBe("Session written-later");
      expect(await page.locator("#live").isHidden()).toBe(false);
      // A few polls later it is still waiting, not an error.
      await page.waitForTimeout(700);
      expect(await page.locator("main").textContent()).not.toContain("Error");
      const recorder = await viewer.startedRun("written-later", "main", "latecomer");
      await recorder.beforeToolCall({ toolCallId: "c1", name: "late_call", args: {} });
      await page
        .locator('[data-testid="attempt-row"].unresolved', { hasText: "late_call" })
        .waitFor({ timeout: 10_000 });
      expect(await waiting.count()).toBe(0);
      expect(await page.locator('[data-testid="run-row"]').textContent()).toContain("latecomer");
      await expect.poll(() => page.locator("tr.event-row").count()).toBe(2);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      later.child.kill("SIGTERM");
    }
  });

  it("marks only the fork's copy of an attempt, and its resolve command works in a shell", async () => {
    const sessionId = "fork it's here";
    const recorder = await viewer.startedRun(sessionId, "main", "shopper");
    const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await viewer.store.fork({ sessionId, runId: "main", newRunId: "branch", uptoSeq: 2 });
    await recorder.toolCompleted(charge, "charged");
    const page = await viewer.browser.newPage();
    await page.goto(
      new URL(`/#/session/${encodeURIComponent(sessionId)}`, viewer.sessionUrl).toString(),
    );
    await page.locator('[data-testid="attempt-row"]').nth(1).waitFor();
    const unresolvedRows = page.locator('[data-testid="attempt-row"].unresolved');
    expect(await unresolvedRows.count()).toBe(1);
    expect(await page.locator('[data-testid="attempt-row"]').nth(0).textContent()).toContain(
      "completed",
    );
    const command = await page.locator('[data-testid="unresolved"] code').textContent();
    expect(command).toBe(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- 'fork it'\\''s here' ${charge.attemptId}`,
    );
    await page.close();
    // Pasted into a shell, its reason filled in, it abandons the fork's copy.
    expect((await runPasted((command as string).replace('"reason"', '"checked"'))).code).toBe(0);
    const after = await inspectSession(viewer.store, sessionId);
    expect(after.unresolved).toEqual([]);
    const branch = after.runs.find((run) => run.runId === "branch");
    const copy = branch?.steps
      .flatMap((step) => step.attempts)
      .find((attempt) => attempt.attemptId === charge.attemptId);
    expect(copy?.status).toBe("abandoned");
  });

  it("asks first for the innermost call in flight, not the agent call waiting on it", async () => {
    const sessionId = "nested-in-flight";
    // The agent call is made again by itself; one that is a decision itself comes first
    // (viewer-decisions.test.ts).
    const { inner } = await recordNestedInFlight(viewer.store, sessionId, {
      outerEffect: MADE_AGAIN,
    });
    const page = await viewer.browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"].unresolved').nth(1).waitFor();
    const items = page.locator('[data-testid="unresolved"] li');
    expect(await items.count()).toBe(2);
    const outerItem = items.filter({ hasText: "writer_tool" });
    expect(await outerItem.textContent()).not.toContain("agent-ledger resolve");
    expect(await outerItem.textContent()).toContain(
      "waits on a call in flight inside its child run: decide that call first",
    );
    expect(await items.filter({ hasText: "tool write" }).locator("code").textContent()).toBe(
      `agent-ledger resolve --abandon "reason" --store ${storeUrl} -- ${sessionId} ${inner.attemptId}`,
    );
    await page.close();
  });

  it("says why a run and a call failed in the run tree, as inspect does", async () => {
    const sessionId = "failed-run";
    const recorder = await viewer.startedRun(sessionId, "run-f", "payer");
    const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    await recorder.toolFailed(charge, new Error("card declined <b>now</b>"));
    await recorder.failRun(new Error("gave up after the charge failed"));
    const page = await viewer.browser.newPage();
    await page.goto(new URL(`/#/session/${sessionId}`, viewer.sessionUrl).toString());
    await page.locator('[data-testid="attempt-row"]').waitFor();
    expect(await page.locator('[data-testid="run-row"]').textContent()).toContain(
      "Error: gave up after the charge failed",
    );
    expect(await page.locator('[data-testid="attempt-row"]').textContent()).toContain(
      "card declined <b>now</b>",
    );
    await page.close();
  });
});
