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

// What an adapter records for an agent used as a tool (openai-agents' asTool, see
// adapter-openai-agents/src/unrecorded-agent-tool.test.ts), recorded here with core's recorder:
// the CLI does not depend on the adapters. The page warns where `inspect` does, in its words.

const INSIDE =
  "its agent does not record every call it makes: a call inside may have run unrecorded (give the agent behind writer_tool to instrumentAgent, after its last tool and handoff are added)";
const NOTHING =
  "its agent recorded nothing here: what it did ran unrecorded (give the agent behind summary_tool to instrumentAgent)";

describe.skipIf(!haveChromium)("the viewer on an agent used as a tool", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  /**
   * Session `sessionId`: an agent call whose child run says (`recordsEveryCall`) or not that it
   * records every call, then an agent call that completed with no child run.
   */
  async function agentCalls(sessionId: string, recordsEveryCall: boolean) {
    const main = new SessionRecorder({
      store,
      sessionId,
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    await main.startRun();
    const agentCall = (toolCallId: string, name: string) =>
      main.beforeToolCall({
        toolCallId,
        name,
        args: {},
        effect: { kind: "none", idempotent: true },
        metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true },
      });
    const write = await agentCall("c-w", "writer_tool");
    const writer = main.child({
      runId: "writer",
      actor: { type: "agent", id: "writer_tool" },
      causedByEventId: write.requestedEventId,
    });
    await writer.startRun(recordsEveryCall ? { [RECORDS_EVERY_CALL_FIELD]: true } : {});
    await writer.completeRun();
    await main.toolCompleted(write, "written");
    if (!recordsEveryCall) {
      const summary = await agentCall("c-s", "summary_tool");
      await main.toolCompleted(summary, "summed up");
    }
  }

  async function open(sessionId: string): Promise<Page> {
    const page = await ui.browser.newPage();
    await page.goto(ui.viewer.sessionUrl(sessionId));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();
    return page;
  }

  // Each row of the tree: its test id and its text.
  const treeRows = (page: Page) =>
    page
      .locator('[data-testid="runs"] > div')
      .evaluateAll((rows) =>
        rows.map((row) => [row.getAttribute("data-testid"), row.textContent?.trim()]),
      );

  it("warns under the child run and under the call with none, where inspect does", async () => {
    await agentCalls("unrecorded", false);
    const printed = renderInspection(await inspectSession(store, "unrecorded"));
    expect(printed).toContain(`!! ${INSIDE}`);
    expect(printed).toContain(`!! ${NOTHING}`);
    const page = await open("unrecorded");
    const rows = await treeRows(page);
    // Under the writer's run (first, before anything read from it), and under summary_tool.
    const writerRun = rows.findIndex(([id, text]) => id === "run-row" && text?.includes("writer"));
    expect(rows[writerRun + 1]).toEqual(["unrecorded-row", `⚠ ${INSIDE}`]);
    const summary = rows.findIndex(([, text]) => text?.includes("summary_tool"));
    expect(rows[summary]?.[0]).toBe("attempt-row");
    expect(rows[summary + 1]).toEqual(["unrecorded-row", `⚠ ${NOTHING}`]);
    expect(rows.filter(([id]) => id === "unrecorded-row")).toHaveLength(2);
    await page.close();
  });

  it("says nothing of a child run that records every call", async () => {
    await agentCalls("recorded", true);
    expect(renderInspection(await inspectSession(store, "recorded"))).not.toContain("!!");
    const page = await open("recorded");
    expect(await page.locator('[data-testid="run-row"]').count()).toBe(2);
    expect(await page.locator('[data-testid="unrecorded-row"]').count()).toBe(0);
    await page.close();
  });
});
