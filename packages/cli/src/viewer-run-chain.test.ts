import { join } from "node:path";
import { type EventStore, openStore } from "@agent-ledger/core";
import { recordHandoffChain, scratchDirectory } from "@agent-ledger/core/testing";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveChromium, launchChromium } from "./chromium.test.data.js";
import { inspectForPage, type PageInspection, type TreeRun } from "./viewer/page-inspection.js";
import { startViewer, type ViewerHandle } from "./viewer/viewer-server.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

/**
 * Runs, each the child run of the one before (handoff after handoff): JSON.stringify of the
 * inspection overflowed the server's call stack at about 2,050, the page's drawing of the tree
 * the page's at about 1,500.
 */
const DEPTH = 5000;
/** The chain the page's walks of the tree are given, in the page (no server, no store). */
const PAGE_DEPTH = 20_000;

const directory = scratchDirectory("agent-ledger-viewer-chain-", { beforeAll, afterAll });
let store: EventStore;
let viewer: ViewerHandle;

beforeAll(async () => {
  store = await openStore(`sqlite:${join(directory, "ledger.db")}`);
  await recordHandoffChain(store, "chain", DEPTH);
  await recordHandoffChain(store, "short", 3);
  viewer = await startViewer({ store });
});

afterAll(async () => {
  await viewer?.close();
  await store?.close();
});

async function inspectionOf(sessionId: string): Promise<Response> {
  return fetch(new URL(`/api/session?id=${sessionId}`, viewer.url));
}

describe(`the viewer's inspection of a chain of ${DEPTH} child runs`, () => {
  it("is answered whole, each run the only child of the one before", async () => {
    const response = await inspectionOf("chain");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const inspection = (await response.json()) as PageInspection;
    expect(inspection.eventCount).toBe(2 * DEPTH);
    expect(inspection.unresolved).toHaveLength(DEPTH);
    // Walked down the nesting (no recursion: as deep as the chain).
    const chain: { runId: string; children: number; causedBy?: string }[] = [];
    for (let runs = inspection.runs; runs.length > 0; runs = (runs[0] as TreeRun).children) {
      const run = runs[0] as TreeRun;
      chain.push({
        runId: run.runId,
        children: runs.length,
        ...(run.causedByEventId === undefined ? {} : { causedBy: run.causedByEventId }),
      });
    }
    // Each run caused by the hand_off call of the run it is nested in.
    const handOffs = inspection.unresolved.map((attempt) => attempt.requestEventId);
    expect(chain).toEqual(
      Array.from({ length: DEPTH }, (_, level) => ({
        runId: `r${level}`,
        children: 1,
        ...(level === 0 ? {} : { causedBy: handOffs[level - 1] }),
      })),
    );
  });

  it("is the text JSON.stringify made of it, where JSON.stringify can", async () => {
    const response = await inspectionOf("short");
    expect(await response.text()).toBe(JSON.stringify(await inspectForPage(store, "short")));
  });
});

describe.skipIf(!haveChromium)("the page on a chain of child runs", () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** A page at `url`, with the errors thrown in it. */
  async function open(url: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(url);
    return { page, errors };
  }

  it(`draws the ${DEPTH} runs, indented 20 levels at most, a deeper one saying its level`, async () => {
    const { page, errors } = await open(viewer.sessionUrl("chain"));
    const runRows = page.locator('[data-testid="run-row"]');
    // The tree, or the error the page shows in place of the session.
    await page.locator('[data-testid="run-row"], #main > p.bad').first().waitFor();
    expect(await page.locator("#main > p.bad").allTextContents()).toEqual([]);
    expect(errors).toEqual([]);
    expect(await runRows.count()).toBe(DEPTH);
    const indent = (row: number) => runRows.nth(row).locator(".indent").textContent();
    expect(await indent(0)).toBe("");
    expect(await indent(20)).toBe(`${"  ".repeat(20)}└ `);
    expect(await indent(21)).toBe(`${"  ".repeat(19)}⋯21 └ `);
    expect(await indent(DEPTH - 1)).toBe(`${"  ".repeat(19)}⋯4,999 └ `);
    expect(await runRows.last().locator("strong").textContent()).toBe(`agent-${DEPTH - 1}`);
    // Its call, a level deeper.
    expect(await page.locator('[data-testid="attempt-row"] .indent').last().textContent()).toBe(
      `${"  ".repeat(19)}⋯5,000 · `,
    );
    // Only the rows in sight are laid out and painted: laying out all 10,000 rows took the page
    // about 4 s of the 7 s it took to show the tree. A row out of sight is drawn once scrolled
    // to, and its text is in the page all along (found by the browser's search).
    const drawn = (row: number) =>
      runRows
        .nth(row)
        .locator(".label")
        .evaluate((label) =>
          (label as unknown as { checkVisibility(options: object): boolean }).checkVisibility({
            contentVisibilityAuto: true,
          }),
        );
    await runRows.first().scrollIntoViewIfNeeded();
    await expect.poll(() => drawn(0)).toBe(true);
    expect(await drawn(DEPTH - 1)).toBe(false);
    await runRows.last().scrollIntoViewIfNeeded();
    await expect.poll(() => drawn(DEPTH - 1)).toBe(true);
    expect(await drawn(0)).toBe(false);
    await page.close();
  });

  it(`walks a chain of ${PAGE_DEPTH} runs in tree order, and a tree as it did`, async () => {
    const { page, errors } = await open(viewer.url);
    // Not a function of this file: vitest's transform of an import() does not run in a page.
    await page.evaluate("import('/run-tree.js').then((tree) => { globalThis.runTree = tree; })");
    const walked = await page.evaluate((depth) => {
      type Run = {
        runId: string;
        actor?: { id: string };
        status: string;
        startedAt: string;
        durationMs: number;
        causedByEventId?: string;
        awaitingDecision?: object;
        pausedWith?: string;
        steps: { stepId: string; attempts: object[] }[];
        children: Run[];
      };
      // The page's elements, as much of them as is read (this package has no DOM types).
      type Shown = { textContent: string | null; querySelector(selector: string): Shown | null };
      type Row = Shown & { dataset: { testid?: string } };
      type Tree = {
        flattenRuns(runs: Run[]): { run: Run; depth: number }[];
        pausedAbove(runs: Run[]): Map<string, string>;
        treeRows(inspection: { runs: Run[] }, view: object): Row[];
      };
      const tree = (globalThis as unknown as { runTree: Tree }).runTree;
      const at = "2026-01-01T00:00:00.000Z";
      // A run with a tool call of an attempt each `calls` names (a retry after the first).
      const run = (runId: string, calls: string[][], children: Run[] = []): Run => ({
        runId,
        actor: { id: runId.toUpperCase() },
        status: "running",
        startedAt: at,
        durationMs: 5,
        steps: calls.map((attempts, step) => ({
          stepId: `${runId}-s${step}`,
          kind: "tool",
          attempts: attempts.map((eventId, index) => ({
            attemptId: `${eventId}-attempt`,
            runId,
            requestEventId: eventId,
            kind: "tool",
            name: `call_${step}`,
            toolCallId: `${runId}/${step}`,
            status: index < attempts.length - 1 ? "requested" : "completed",
            requestedAt: at,
            resolvedAt: at,
            durationMs: 1,
          })),
        })),
        children,
      });
      const view = (pausedRunOf: Map<string, string>, pausedRun: string) => ({
        t0: Date.parse(at),
        t1: Date.parse(at) + 10,
        unresolvedIds: new Set(),
        waitingIds: new Set(),
        pausedRunOf,
        pauseText: new Map([[pausedRun, "paused at an approval"]]),
        notIntact: new Map([["c", { runId: "c", text: "run c is not intact" }]]),
        causeText: (eventId: string) => `caused by ${eventId}`,
        select: () => {},
        shown: { steps: new Map(), attempts: new Set() },
        redraw: () => {},
      });
      // Each row's test id, indentation, and what its label says after it.
      const shown = (rows: Row[]) =>
        rows.map((row) => {
          const label = row.querySelector(".label") as Shown;
          const indent = label.querySelector(".indent")?.textContent ?? "";
          return [row.dataset.testid ?? "", indent, (label.textContent ?? "").slice(indent.length)];
        });

      // A tree: child runs under the calls that made them (b under a retried call), one made
      // by no call (d, after the calls), b paused with e under it, c not intact.
      const b = run("b", [], [{ ...run("e", [["e-e0"]]), pausedWith: "b" }]);
      b.awaitingDecision = {};
      b.pausedWith = "b";
      const c = { ...run("c", []), causedByEventId: "e-a1" };
      const small = [
        run(
          "a",
          [["e-a0", "e-a0-retry"], ["e-a1"]],
          [c, { ...b, causedByEventId: "e-a0" }, run("d", [])],
        ),
        run("f", []),
      ];
      const smallPaused = tree.pausedAbove(small);

      // The chain: each run under the one call of the run before, the first paused.
      let chain = run(`r${depth - 1}`, [[`e${depth - 1}`]]);
      for (let level = depth - 2; level >= 0; level--)
        chain = run(`r${level}`, [[`e${level}`]], [{ ...chain, causedByEventId: `e${level}` }]);
      chain.awaitingDecision = {};
      // The server says which runs wait with the paused one (waitingWithPause): all of them.
      for (let each: Run | undefined = chain; each !== undefined; each = each.children[0])
        each.pausedWith = "r0";
      const order = tree.flattenRuns([chain]);
      const paused = tree.pausedAbove([chain]);
      const rows = shown(tree.treeRows({ runs: [chain] }, view(paused, "r0")));
      return {
        small: {
          order: tree.flattenRuns(small).map(({ run, depth }) => `${run.runId}${depth}`),
          paused: [...smallPaused],
          rows: shown(tree.treeRows({ runs: small }, view(smallPaused, "b"))),
        },
        chain: {
          inOrder: order.every(
            (entry, index) => entry.run.runId === `r${index}` && entry.depth === index,
          ),
          length: order.length,
          paused: paused.size,
          pausedWithFirst: [...paused.values()].every((runId) => runId === "r0"),
          rows: rows.length,
          runRowsInOrder: rows
            .filter(([testId]) => testId === "run-row")
            .every((row, index) => row[2]?.startsWith(`R${index}paused`)),
          last: rows.slice(-3),
        },
      };
    }, PAGE_DEPTH);
    expect(walked.small.order).toEqual(["a0", "c1", "b1", "e2", "d1", "f0"]);
    expect(walked.small.paused).toEqual([
      ["b", "b"],
      ["e", "b"],
    ]);
    // As the recursive drawing drew it: each child run under the call that made it.
    expect(walked.small.rows).toEqual([
      ["run-row", "", "Arunning 5 ms · a"],
      ["attempt-row", "  · ", "tool call_0 [a/0]retried 1 ms"],
      ["run-row", "  └ ", "Bpaused 5 ms · b ← caused by e-a0"],
      ["run-row", "    └ ", "Epaused 5 ms · e"],
      ["attempt-row", "      · ", "tool call_0 [e/0]completed 1 ms"],
      ["paused-row", "    ", "⏸ paused at an approval"],
      ["attempt-row", "  ↻ ", "tool call_0 [a/0]completed 1 ms"],
      ["attempt-row", "  · ", "tool call_1 [a/1]completed 1 ms"],
      ["run-row", "  └ ", "Crunning 5 ms · c ← caused by e-a1"],
      ["not-intact-row", "    ", "⚠ run c is not intact"],
      ["run-row", "  └ ", "Drunning 5 ms · d"],
      ["run-row", "", "Frunning 5 ms · f"],
    ]);
    expect(walked.chain).toEqual({
      inOrder: true,
      length: PAGE_DEPTH,
      paused: PAGE_DEPTH,
      pausedWithFirst: true,
      // A row for each run and its call; the pause under the first run, last.
      rows: 2 * PAGE_DEPTH + 1,
      runRowsInOrder: true,
      last: [
        [
          "run-row",
          `${"  ".repeat(19)}⋯19,999 └ `,
          "R19999paused 5 ms · r19999 ← caused by e19998",
        ],
        ["attempt-row", `${"  ".repeat(19)}⋯20,000 · `, "tool call_0 [r19999/0]completed 1 ms"],
        ["paused-row", "  ", "⏸ paused at an approval"],
      ],
    });
    expect(errors).toEqual([]);
    await page.close();
  });
});
