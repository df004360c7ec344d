import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { recordGapSession, runBin } from "../session-fixture.test.data.js";
import { startViewer } from "../viewer/viewer-server.js";

/**
 * A session with a refund call in flight whose first request's message text (and the message
 * list naming it) were then lost; the blob refs lost.
 */
async function lostBlobSession(): Promise<{ path: string; lost: string[] }> {
  const path = join(scratchDirectory("agent-ledger-inspect-", onTestFinished), "ledger.db");
  const store = await openStore(`sqlite:${path}`);
  const recorder = new SessionRecorder({
    store,
    sessionId: "lost-blob",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  // A long message text is kept in the blob store, the event names it.
  const content = "Refund order 42. ".repeat(200);
  const model = await recorder.beforeModelCall({
    request: { model: "m", messages: [{ role: "user", content }] },
  });
  await recorder.modelCompleted(model, { toolCalls: [{ id: "c1", name: "refund" }] });
  await recorder.beforeToolCall({ toolCallId: "c1", name: "refund", args: { order: 42 } });
  await store.close();
  const database = new Database(path);
  const lost = (
    database.prepare("SELECT hex(digest) AS hex FROM blobs").all() as { hex: string }[]
  ).map((row) => `sha256:${row.hex.toLowerCase()}`);
  expect(database.prepare("DELETE FROM blobs").run().changes).toBeGreaterThan(0);
  database.close();
  return { path, lost: lost.sort() };
}

describe("a session whose blob is lost", () => {
  it("inspect, tail and the viewer show what was in flight with a warning; export says how to get it as stored", async () => {
    const { path, lost } = await lostBlobSession();
    const lostWarning = /warning: blob (sha256:[0-9a-f]{64}) named by an event is not in the store/;

    const result = await runBin(["--store", `sqlite:${path}`, "inspect", "lost-blob"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("UNRESOLVED");
    expect(result.stdout).toContain("refund");
    const lostRef = lostWarning.exec(result.stderr)?.[1];
    expect(lostRef).toBeDefined();
    const json = await runBin(["--store", `sqlite:${path}`, "inspect", "lost-blob", "--json"]);
    expect(json.code).toBe(0);
    const { nextSteps: printed, ...inspection } = JSON.parse(json.stdout);
    // The decision the text prints, for a script: the same command, with the same store.
    const command = `agent-ledger resolve --abandon "reason" --store sqlite:${path} -- lost-blob ${inspection.unresolved[0].attemptId}`;
    expect(result.stdout).toContain(command);
    expect(printed).toEqual([{ action: "resolve", command }]);
    // Every blob lost is named, whether or not the inspection puts its content back.
    expect(inspection.missingBlobs).toEqual(lost);
    expect(lost).toContain(lostRef);
    // The model call that completed is shown as completed, its lost text as its reference.
    expect(inspection.runs[0].steps[0].attempts[0].status).toBe("completed");
    expect(JSON.stringify(inspection.runs[0].steps[0].attempts[0].request)).toContain(lostRef);
    expect(inspection.unresolved).toMatchObject([
      { kind: "tool", name: "refund", request: { args: { order: 42 } } },
    ]);

    const tail = await runBin(["--store", `sqlite:${path}`, "tail", "lost-blob", "--json"]);
    expect(tail.code).toBe(0);
    expect(tail.stderr).toMatch(lostWarning);
    expect(tail.stdout.trim().split("\n")).toHaveLength(4);

    // An export would not be complete: it says so, and how to get the events as stored.
    for (const format of ["jsonl", "atif", "otlp-json"]) {
      const exported = await runBin([
        "--store",
        `sqlite:${path}`,
        "export",
        "lost-blob",
        "--format",
        format,
      ]);
      expect(exported.code, format).toBe(3);
      expect(exported.stderr, format).toContain(
        `blob ${lostRef} named by an event is not in the store`,
      );
      expect(exported.stderr, format).toContain("--format jsonl --raw");
    }
    const raw = await runBin(["--store", `sqlite:${path}`, "export", "lost-blob", "--raw"]);
    expect(raw.code).toBe(0);
    expect(raw.stdout.trim().split("\n")).toHaveLength(4);

    const store = await openStore(`sqlite:${path}`);
    const viewer = await startViewer({ store });
    try {
      const session = await fetch(new URL("/api/sessions/lost-blob", viewer.url));
      expect(session.status).toBe(200);
      // The inspection as the page draws it (page-inspection.ts): what inspect --json says of
      // the calls in flight and the lost blobs; the run tree with what its rows show.
      type Tree = { steps: { attempts: { status: string }[] }[] }[];
      const { runs, ...inFlight } = inspection;
      const shown = (await session.json()) as { unresolved: unknown; runs: Tree };
      expect(shown).toMatchObject({
        ...inFlight,
        // What inspect prints for the refund in flight, written out (not nextSteps' own answer).
        nextSteps: [
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" -- lost-blob ${inspection.unresolved[0].attemptId}`,
          },
        ],
      });
      // Each with the line the page shows under its resolve command (what inspect prints there).
      expect(shown.unresolved).toEqual(
        inspection.unresolved.map((attempt: object) => ({
          ...attempt,
          decide: expect.stringContaining('--approve "reason" instead makes it again'),
        })),
      );
      const statuses = (tree: Tree) =>
        tree.flatMap((run) => run.steps.flatMap((step) => step.attempts.map((one) => one.status)));
      expect(statuses(shown.runs)).toEqual(statuses(runs));
      const events = await fetch(new URL("/api/sessions/lost-blob/events", viewer.url));
      expect(events.status).toBe(200);
      const page = (await events.json()) as { events: unknown[]; missingBlobs: string[] };
      expect(page.events).toHaveLength(4);
      expect(page.missingBlobs).toEqual([lostRef]);
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});

describe("inspect on a session whose rows were deleted by hand", () => {
  it("warns on the run whose seqs have a gap (text and --json), pointing at verify", async () => {
    const path = join(scratchDirectory("agent-ledger-inspect-", onTestFinished), "ledger.db");
    const warning = await recordGapSession(path);
    const text = await runBin(["--store", `sqlite:${path}`, "inspect", "gap"]);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[1]).toMatch(/^└─ a \(main\) {2}COMPLETED .* {2}4 events$/);
    expect(lines[2]).toBe(`   ├─ !! ${warning}`);
    // What the gap hides: the payment completed, yet reads as in flight.
    expect(text.stdout).toContain("tool pay [c1]  !! UNRESOLVED");

    const json = await runBin(["--store", `sqlite:${path}`, "inspect", "gap", "--json"]);
    expect(json.code).toBe(0);
    expect(json.stderr).toContain(`agent-ledger: warning: ${warning}\n`);
    const answer = JSON.parse(json.stdout);
    expect(answer.runs[0].seqGap).toEqual({ after: 1, next: 3 });
    expect(answer.notIntact).toEqual([
      { runId: "main", seqGap: { after: 1, next: 3 }, text: warning },
    ]);
  });
});
