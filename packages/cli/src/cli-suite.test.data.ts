import { type EventStore, openStore, redactUrl } from "@agent-ledger/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeCommandCases } from "./cli-suite-writes.test.data.js";
import { shellQuote } from "./format.js";
import {
  type DemoSession,
  INJECTION,
  recordDemoSession,
  runBin,
  startBin,
} from "./session-fixture.test.data.js";

export interface CliSuiteOptions {
  name: string;
  /** Skip the suite (a server this run may not reach; under CI=true its check fails instead). */
  skip?: boolean;
  storeUrl: string;
  sessionId: string;
  /** Changes the content of event (runId, seq) in place, behind the store's back. */
  tamper(options: { sessionId: string; runId: string; seq: number }): Promise<void>;
  /**
   * A URL on the same server where no ledger is (another schema, database or key prefix), and
   * how many tables or keys it holds: a reading command must make none there.
   */
  noLedger?: { storeUrl: string; leftovers(): Promise<number> };
  /**
   * URLs the server answers with a refusal: a database it does not have, and a user or password
   * it does not take. Neither is a server out of reach (exit 4, which a script may retry).
   * `noDatabaseForUser`: a database the server does not have, asked for by a user it refuses
   * every database it is not granted (MariaDB: "Access denied ... to database"), which is not
   * a wrong password.
   */
  refused?: { noDatabase: string; badCredentials: string; noDatabaseForUser?: () => string };
  /**
   * A URL whose credentials may only read the ledger (an on-call person's), `grant`, which
   * makes that user once the ledger is there, and how the server words its refusal of a write.
   */
  readOnly?: {
    storeUrl: string;
    grant(): Promise<void>;
    refusal: RegExp;
    /**
     * Redis: a user that may read the ledger's keys but not run its scripts, `grantKeys` making
     * it (`verify` reads a run with a script).
     */
    keysOnly?: { storeUrl: string; grantKeys(): Promise<void> };
  };
}

/**
 * What the suite's cases in other files are handed: its options, `cli`, and the store and demo
 * session its `beforeAll` opened and recorded (read once that has run).
 */
export interface CliSuite {
  options: CliSuiteOptions;
  cli: (...args: string[]) => ReturnType<typeof runBin>;
  opened(): { store: EventStore; demo: DemoSession };
}

/** The CLI commands against a real store, through the built binary. */
export function describeCliCommands(options: CliSuiteOptions): void {
  describe.skipIf(options.skip === true)(`agent-ledger commands on ${options.name}`, () => {
    let store: EventStore;
    let demo: DemoSession;
    const cli = (...args: string[]) => runBin(["--store", options.storeUrl, ...args]);

    beforeAll(async () => {
      store = await openStore(options.storeUrl);
      demo = await recordDemoSession(store, options.sessionId);
    });
    afterAll(async () => {
      await store?.close();
    });

    it("sessions lists the session", async () => {
      const result = await cli("sessions", "--json");
      expect(result.code).toBe(0);
      const sessions = JSON.parse(result.stdout) as { sessionId: string; eventCount: number }[];
      expect(sessions.find((session) => session.sessionId === demo.sessionId)?.eventCount).toBe(12);
      const text = await cli("sessions");
      expect(text.stdout).toContain(demo.sessionId);
    });

    // SQLite has no users: a file the process may open is one it may write.
    const readOnly = options.readOnly;
    if (readOnly !== undefined)
      it("a user who may only read inspects, tails, exports and verifies; resolve changes nothing", async () => {
        await readOnly.grant();
        const reader = (...args: string[]) => runBin(["--store", readOnly.storeUrl, ...args]);
        const sessions = await reader("sessions");
        expect(sessions.code, sessions.stderr).toBe(0);
        expect(sessions.stdout).toContain(demo.sessionId);
        const inspection = await reader("inspect", demo.sessionId, "--json");
        expect(inspection.code, inspection.stderr).toBe(0);
        expect(JSON.parse(inspection.stdout).unresolved).toHaveLength(1);
        for (const command of [
          ["tail", demo.sessionId],
          ["export", demo.sessionId, "--format", "atif"],
          ["verify", demo.sessionId],
        ]) {
          const result = await reader(...command);
          expect(result.code, `${command[0]}: ${result.stderr}`).toBe(0);
        }
        // Nothing to upgrade: a user that may only read learns so, and nothing is written.
        const upgrade = await reader("upgrade");
        expect(upgrade.code, upgrade.stderr).toBe(0);
        expect(upgrade.stdout).toContain("version this release reads: nothing to upgrade");
        const refused = await reader(
          "resolve",
          demo.sessionId,
          demo.unresolvedAttemptId,
          "--abandon",
          "read-only",
        );
        // Refused by the server (exit 1, as the README says), not "unavailable" (exit 4), which
        // a script retries later: waiting does not give the user the right to write.
        expect(refused.code, refused.stderr).toBe(1);
        expect(refused.stderr).toMatch(readOnly.refusal);
        expect(refused.stderr).toContain("the server refused the store URL's user");
        expect(refused.stderr).toContain("check what the store URL's user may do");
        const after = await cli("inspect", demo.sessionId, "--json");
        expect(JSON.parse(after.stdout).unresolved).toHaveLength(1);
        const deletion = await reader("delete", demo.sessionId, "--yes", "--cancel-open", "no");
        expect(deletion.code, deletion.stderr).toBe(1);
        expect(deletion.stderr).toMatch(readOnly.refusal);
        expect((await cli("inspect", demo.sessionId, "--json")).stdout).toBe(after.stdout);
      });

    const keysOnly = readOnly?.keysOnly;
    if (keysOnly !== undefined)
      it("a user the ledger's read script is not granted to is told so by verify (exit 1), not that the store is unavailable", async () => {
        await keysOnly.grantKeys();
        const result = await runBin(["--store", keysOnly.storeUrl, "verify", demo.sessionId]);
        // It said "redis readRun failed: NOPERM ..." with exit 4, which a script retries.
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr).toContain("the server refused the store URL's user");
        expect(result.stderr).toContain("+evalsha and +eval");
      });

    it("inspect prints the run tree with the unresolved attempt marked", async () => {
      const result = await cli("inspect", demo.sessionId);
      expect(result.code).toBe(0);
      const out = result.stdout;
      expect(out).toContain(`session ${demo.sessionId}  12 events  2 runs  1 unresolved`);
      expect(out).toMatch(/planner \(.+\) {2}RUNNING/);
      expect(out).toMatch(/model gpt-4o-mini {2}completed {2}\d+ ms/);
      expect(out).toMatch(
        /availability-checker \(.+\) {2}FAILED .* caused by tool find_slots \[call-1\]/,
      );
      expect(out).toMatch(/model small-model {2}failed .*"upstream 503"/);
      expect(out).toContain(`tool book_table [call-2]  !! UNRESOLVED`);
      // The store as given (a password in it shown as ***), then the ids after "--".
      expect(out).toContain(
        `agent-ledger resolve --abandon "reason" --store ${shellQuote(redactUrl(options.storeUrl))} -- ${demo.sessionId} ${demo.unresolvedAttemptId}\n`,
      );
      const json = await cli("inspect", demo.sessionId, "--json");
      const inspection = JSON.parse(json.stdout);
      expect(
        inspection.unresolved.map((attempt: { attemptId: string }) => attempt.attemptId),
      ).toEqual([demo.unresolvedAttemptId]);
      expect(inspection.runs[0].children[0].runId).toBe(demo.childRunId);
    });

    it("tail pages by cursor through every event once, and --follow sees new ones", async () => {
      const result = await cli("tail", demo.sessionId, "--json", "--page-size", "3");
      expect(result.code).toBe(0);
      const cursors = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).commitCursor);
      expect(cursors).toEqual(Array.from({ length: 12 }, (_, index) => index + 1));
      const text = await cli("tail", demo.sessionId, "--from", "10");
      expect(text.stdout.trim().split("\n")).toHaveLength(2);
      expect(text.stdout).toContain("tool.requested  book_table  [call-2]");

      const follower = await startBin(
        [
          "--store",
          options.storeUrl,
          "tail",
          demo.sessionId,
          "--follow",
          "--json",
          "--interval",
          "50",
          "--page-size",
          "2",
        ],
        /"commitCursor":12\D/,
      );
      try {
        const writer = await store.append({
          sessionId: demo.sessionId,
          runId: "tail-writer",
          expectedSeq: 0,
          events: [{ type: "run.started", payload: {} }],
        });
        for (let seq = 1; seq <= 4; seq++)
          await store.append({
            sessionId: demo.sessionId,
            runId: "tail-writer",
            expectedSeq: seq,
            events: [{ type: "x.tick", payload: { seq } }],
          });
        expect(writer.events[0]?.commitCursor).toBe(13);
        await expect
          .poll(() => follower.output().includes('"commitCursor":17'), { timeout: 10_000 })
          .toBe(true);
        const exited = new Promise<number | null>((resolve) =>
          follower.child.once("exit", resolve),
        );
        follower.child.kill("SIGINT");
        // Stopped, not come to an end: 130, as every command Ctrl-C stops (tail-interrupt.test.ts).
        expect(await exited).toBe(130);
        const seen = follower
          .output()
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line).commitCursor);
        expect(seen).toEqual(Array.from({ length: 17 }, (_, index) => index + 1));
      } finally {
        follower.child.kill("SIGKILL");
      }
    });

    it("export writes jsonl, ATIF and OTLP/JSON", async () => {
      const jsonl = await cli("export", demo.sessionId, "--format", "jsonl");
      expect(jsonl.code).toBe(0);
      const events = jsonl.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(events.length).toBeGreaterThanOrEqual(12);
      expect(events[1].payload.input).toContain(INJECTION);
      expect(jsonl.stderr).toBe(""); // not a terminal: no progress

      const atif = JSON.parse((await cli("export", demo.sessionId, "--format", "atif")).stdout);
      expect(atif).toMatchObject({
        schema_version: "ATIF-v1.7",
        session_id: demo.sessionId,
        trajectory_id: demo.rootRunId,
        agent: { name: "planner", version: "1.0.0", model_name: "gpt-4o-mini" },
        final_metrics: { total_prompt_tokens: 42, total_completion_tokens: 17 },
      });
      const agentStep = atif.steps.find((step: { source: string }) => step.source === "agent");
      expect(agentStep).toMatchObject({
        step_id: 2,
        model_name: "gpt-4o-mini",
        metrics: { prompt_tokens: 42, completion_tokens: 17 },
        tool_calls: [
          { tool_call_id: "call-1", function_name: "find_slots", arguments: { people: 2 } },
          { tool_call_id: "call-2", function_name: "book_table", arguments: { slot: "20:00" } },
        ],
      });
      expect(agentStep.observation.results[0]).toMatchObject({
        source_call_id: "call-1",
        content: '["20:00","21:30"]',
        subagent_trajectory_ref: [{ trajectory_id: demo.childRunId }],
      });
      expect(atif.subagent_trajectories[0].trajectory_id).toBe(demo.childRunId);

      const otlp = JSON.parse(
        (await cli("export", demo.sessionId, "--format", "otlp-json")).stdout,
      );
      const spans = otlp.resourceSpans[0].scopeSpans[0].spans as {
        name: string;
        spanId: string;
        parentSpanId?: string;
        kind: number;
        status: { code: number };
        attributes: { key: string; value: Record<string, unknown> }[];
        startTimeUnixNano: string;
      }[];
      const byName = (name: string) => spans.find((span) => span.name === name);
      const root = byName("invoke_agent planner");
      expect(root?.parentSpanId).toBeUndefined();
      // The sub-agent hangs under the tool call that ran it, in the planner's trace.
      const findSlots = byName("execute_tool find_slots");
      expect(findSlots?.parentSpanId).toBe(root?.spanId);
      expect(byName("invoke_agent availability-checker")?.parentSpanId).toBe(findSlots?.spanId);
      const chat = byName("chat gpt-4o-mini");
      expect(chat?.parentSpanId).toBe(root?.spanId);
      expect(chat?.kind).toBe(3); // SPAN_KIND_CLIENT
      expect(chat?.attributes).toContainEqual({
        key: "gen_ai.usage.input_tokens",
        value: { intValue: "42" },
      });
      expect(chat?.attributes).toContainEqual({
        key: "gen_ai.provider.name",
        value: { stringValue: "openai" },
      });
      const book = byName("execute_tool book_table");
      expect(book?.status.code).toBe(2);
      expect(book?.attributes).toContainEqual({
        key: "gen_ai.tool.call.id",
        value: { stringValue: "call-2" },
      });
      expect(BigInt(root?.startTimeUnixNano ?? "0") / 1_000_000n).toBe(
        BigInt(Date.parse(events[0].recordedAt)),
      );

      const bad = await cli("export", demo.sessionId, "--format", "csv");
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("unknown export format");
    });
    // Registered here, after the cases above: they run in this order on the one demo session.
    writeCommandCases({ options, cli, opened: () => ({ store, demo }) });
  });
}
