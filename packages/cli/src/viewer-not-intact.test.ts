import { join } from "node:path";
import { type EventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "./chromium.test.data.js";
import type { PageInspection } from "./viewer/page-inspection.js";
import { startViewer, type ViewerHandle } from "./viewer/viewer-server.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

// A run id a page must show as a value: markup as text, its direction control as an escape.
const HOSTILE_RUN = "main<img src=x onerror=alert(1)>\u202e";

describe.skipIf(!haveChromium)("the viewer on a run whose rows were deleted by hand", () => {
  // Made here, not in beforeAll: a hook registered inside a hook never runs, and the directory
  // would stay behind.
  const directory = scratchDirectory("agent-ledger-viewer-gap-", { beforeAll, afterAll });
  let browser: Browser;
  let viewer: ViewerHandle;
  let store: EventStore;
  let path: string;

  beforeAll(async () => {
    path = join(directory, "ledger.db");
    store = await openStore(`sqlite:${path}`);
    // A payment that completed; then its completion's row deleted by hand (seq 2).
    for (const [sessionId, runId] of [
      ["gap", "main"],
      ["hostile", HOSTILE_RUN],
    ] as const) {
      const recorder = new SessionRecorder({
        store,
        sessionId,
        runId,
        actor: { type: "agent", id: "a" },
      });
      await recorder.startRun();
      const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
      await recorder.toolCompleted(call, { paid: true });
      await recorder.completeRun("done");
    }
    const database = new Database(path);
    expect(database.prepare("DELETE FROM events WHERE seq = 2").run().changes).toBe(2);
    database.close();
    viewer = await startViewer({ store, pollMs: 200, storeUrl: `sqlite:${path}` });
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await viewer?.close();
    await store?.close();
  });

  async function open(sessionId: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("dialog", (dialog) => {
      errors.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    await page.goto(viewer.sessionUrl(sessionId));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    return { page, errors };
  }

  it("warns above the unresolved box and on the run in the tree, with the verify command", async () => {
    const { page, errors } = await open("gap");
    const command = `agent-ledger verify --store sqlite:${path} gap`;

    // What the gap hides: the payment completed, yet reads as in flight.
    const unresolved = page.locator('[data-testid="unresolved"]');
    expect(await unresolved.isHidden()).toBe(false);

    const box = page.locator('[data-testid="not-intact"]');
    expect(await box.isVisible()).toBe(true);
    const said = (await box.textContent()) ?? "";
    expect(said).toContain("run main is not intact (seq 2 is missing)");
    expect(said).toContain("not what was recorded");
    // The command as the resolve commands are shown: its own element, to copy.
    expect(await box.locator("code").textContent()).toBe(command);
    // Above the unresolved box: read before anything is decided.
    const order = await box.evaluate(
      (element, other) => element.compareDocumentPosition(other as unknown as typeof element),
      await unresolved.elementHandle(),
    );
    expect(order & 4).toBe(4); // DOCUMENT_POSITION_FOLLOWING: the unresolved box comes after

    // inspect's words, on the page as in the terminal; the command with a button to copy it.
    const warning = `run main is not intact (seq 2 is missing): run ${command}`;
    const line = box.locator('[data-testid="not-intact-run"]');
    const words = await line.evaluate((element) => {
      const copy = element.cloneNode(true) as typeof element;
      for (const button of copy.querySelectorAll("button")) button.remove();
      return copy.textContent;
    });
    expect(words).toBe(warning);
    expect(await line.locator('[data-testid="copy-command"]').count()).toBe(1);

    // In the tree, first under the run, as `inspect` prints it.
    const rows = page.locator(".tree > .row");
    expect(await rows.nth(0).getAttribute("data-testid")).toBe("run-row");
    expect(await rows.nth(1).getAttribute("data-testid")).toBe("not-intact-row");
    const row = rows.nth(1);
    expect(await row.textContent()).toContain("run main is not intact (seq 2 is missing)");
    expect(await row.locator("code").textContent()).toBe(command);
    expect(errors).toEqual([]);

    // What the server sends: the run's gap kept in the page's slimmer tree, and the warning.
    const answer = (await (
      await fetch(new URL("/api/session?id=gap", viewer.url))
    ).json()) as PageInspection;
    expect(answer.runs[0]?.seqGap).toEqual({ after: 1, next: 3 });
    expect(answer.notIntact).toEqual([
      {
        runId: "main",
        seqGap: { after: 1, next: 3 },
        text: warning,
        what: "seq 2 is missing",
        command,
      },
    ]);
    await page.close();
  });

  it("shows a hostile run id as a value: isolated, its markup as text, its direction control escaped", async () => {
    const { page, errors } = await open("hostile");
    const box = page.locator('[data-testid="not-intact"]');
    await box.waitFor();
    expect(await box.locator("img").count()).toBe(0);
    expect(await page.locator('[data-testid="not-intact-row"] img').count()).toBe(0);
    const shown = "main<img src=x onerror=alert(1)>\\u202e";
    expect(await box.locator("bdi", { hasText: "main<img" }).first().textContent()).toBe(shown);
    expect(await box.textContent()).not.toContain("\u202e");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("says nothing of it on an intact run", async () => {
    const recorder = new SessionRecorder({
      store,
      sessionId: "intact",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
    const { page, errors } = await open("intact");
    expect(await page.locator('[data-testid="not-intact"]').isHidden()).toBe(true);
    expect(await page.locator('[data-testid="not-intact-row"]').count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
