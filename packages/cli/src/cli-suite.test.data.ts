import { type EventStore, openStore, redactUrl, SessionRecorder } from "@agent-ledger/core";
import { storedBytes } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
        expect(await exited).toBe(0);
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

    it("resolve abandons the unresolved attempt as a human, once; asked again, it writes nothing", async () => {
      const missing = await cli("resolve", demo.sessionId, "no-such-attempt", "--abandon", "x");
      expect(missing.code).toBe(3);
      const noReason = await cli("resolve", demo.sessionId, demo.unresolvedAttemptId);
      expect(noReason.code).toBe(2);
      const both = await cli(
        "resolve",
        demo.sessionId,
        demo.unresolvedAttemptId,
        "--abandon",
        "a",
        "--approve",
        "b",
      );
      expect(both.code).toBe(2);
      const result = await cli(
        "resolve",
        demo.sessionId,
        demo.unresolvedAttemptId,
        "--abandon",
        "booked by phone",
        "--actor",
        "alice",
        "--json",
      );
      expect(result.code).toBe(0);
      const event = JSON.parse(result.stdout);
      expect(event).toMatchObject({
        type: "attempt.abandoned",
        attemptId: demo.unresolvedAttemptId,
        runId: demo.rootRunId,
        actor: { type: "human", id: "alice" },
        payload: { reason: "booked by phone", toolCallId: "call-2" },
      });
      const inspection = JSON.parse((await cli("inspect", demo.sessionId, "--json")).stdout);
      expect(inspection.unresolved).toEqual([]);
      const again = await cli(
        "resolve",
        demo.sessionId,
        demo.unresolvedAttemptId,
        "--abandon",
        "again",
      );
      // Asked again (a runbook run twice): what was asked for holds, nothing is written again,
      // and it says which reason the ledger holds.
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("was abandoned already: booked by phone");
      const after = JSON.parse((await cli("inspect", demo.sessionId, "--json")).stdout);
      expect(after.eventCount).toBe(inspection.eventCount);
      // Another decision on it is refused.
      const approve = await cli(
        "resolve",
        demo.sessionId,
        demo.unresolvedAttemptId,
        "--approve",
        "run it",
      );
      expect(approve.code).toBe(1);
      expect(approve.stderr).toContain("is not unresolved (it is abandoned)");
    });

    it("export and tail put content kept in the blob store back in place (unless --raw)", async () => {
      const sessionId = `${options.sessionId}-blobs`;
      const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } });
      await recorder.startRun();
      const long = `${"the weather in Lisbon is sunny and warm ".repeat(60)}END`;
      const call = await recorder.beforeModelCall({
        request: { model: "m", messages: [{ role: "user", content: long }] },
      });
      await recorder.modelCompleted(call, { text: long });
      await recorder.completeRun();
      const resolved = await cli("export", sessionId, "--format", "jsonl");
      expect(resolved.code).toBe(0);
      expect(resolved.stdout).toContain(long);
      expect(resolved.stdout).not.toContain('"$ledger"');
      const raw = await cli("export", sessionId, "--format", "jsonl", "--raw");
      expect(raw.stdout).toContain('"$ledger"');
      expect(raw.stdout).not.toContain(long);
      const tail = await cli("tail", sessionId, "--json");
      expect(tail.stdout).toContain(long);
    });

    it("resolve --approve records an approval the next resume acts on", async () => {
      const sessionId = `${options.sessionId}-approve`;
      const recorder = new SessionRecorder({
        store,
        sessionId,
        runId: "run",
        actor: { type: "agent", id: "a" },
      });
      await recorder.startRun();
      const call = await recorder.beforeToolCall({
        toolCallId: "pay-1",
        name: "pay",
        args: { amount: 5 },
      });
      const result = await cli(
        "resolve",
        sessionId,
        call.attemptId,
        "--approve",
        "bank says not paid",
        "--json",
      );
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        type: "attempt.approved",
        attemptId: call.attemptId,
        actor: { type: "human" },
        payload: { reason: "bank says not paid", toolCallId: "pay-1" },
      });
      const inspection = JSON.parse((await cli("inspect", sessionId, "--json")).stdout);
      expect(inspection.unresolved[0]).toMatchObject({ attemptId: call.attemptId });
      expect(inspection.unresolved[0].approvedAt).toEqual(expect.any(String));
      const resumed = await SessionRecorder.resume({
        store,
        sessionId,
        runId: "run",
        actor: { type: "agent", id: "a" },
      });
      const rerun = await resumed.beforeToolCall({
        toolCallId: "pay-1",
        name: "pay",
        args: { amount: 5 },
      });
      expect(rerun.retryOf).toBe(call.attemptId);
    });

    it("inspect shows who approved a re-run, when and why", async () => {
      const sessionId = `${options.sessionId}-approved`;
      const recorder = new SessionRecorder({
        store,
        sessionId,
        runId: "run",
        actor: { type: "agent", id: "a" },
      });
      await recorder.startRun();
      const call = await recorder.beforeToolCall({
        toolCallId: "mail-1",
        name: "send_email",
        args: { to: "bob" },
        effect: { kind: "write", idempotent: false },
      });
      const approved = await cli(
        "resolve",
        sessionId,
        call.attemptId,
        "--approve",
        "checked: not sent",
        "--actor",
        "jane",
        "--json",
      );
      expect(approved.code).toBe(0);
      const at = JSON.parse(approved.stdout).recordedAt as string;
      const text = await cli("inspect", sessionId);
      expect(text.code).toBe(0);
      const approval = `approved for a re-run by jane at ${at}: "checked: not sent"`;
      // On the attempt's line in the tree, and in the list of unresolved attempts.
      expect(text.stdout).toMatch(
        new RegExp(
          `tool send_email \\[mail-1\\] {2}!! UNRESOLVED .* {2}${approval}  attempt ${call.attemptId}\n`,
        ),
      );
      expect(text.stdout).toContain(`     ${approval}; the next resume makes the call again\n`);
    });

    it("verify passes, then exits 1 with the bad seq after tampering", async () => {
      const clean = await cli("verify", demo.sessionId);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain("intact");
      await options.tamper({ sessionId: demo.sessionId, runId: demo.rootRunId, seq: 1 });
      const tampered = await cli("verify", demo.sessionId, "--json");
      expect(tampered.code).toBe(1);
      const report = JSON.parse(tampered.stdout);
      expect(report.ok).toBe(false);
      expect(
        report.runs.find((run: { runId: string }) => run.runId === demo.rootRunId),
      ).toMatchObject({ ok: false, badSeq: 1 });
      expect(
        report.runs.find((run: { runId: string }) => run.runId === demo.childRunId),
      ).toMatchObject({ ok: true });
      const text = await cli("verify", demo.sessionId);
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(`TAMPERED  run ${demo.rootRunId}  bad seq 1`);
    });

    it("verify --all checks every session the store lists: the tampered one fails (exit 1)", async () => {
      const text = await cli("verify", "--all");
      expect(text.code, text.stderr).toBe(1);
      const lines = text.stdout.trimEnd().split("\n");
      const failed = lines.indexOf(`FAILED  session ${demo.sessionId}`);
      expect(failed, text.stdout).toBeGreaterThanOrEqual(0);
      expect(lines[failed + 1]).toMatch(`  TAMPERED  run ${demo.rootRunId}  bad seq 1: `);
      expect(lines.at(-1)).toMatch(
        /^\d+ session\(s\), \d+ run\(s\): 1 run\(s\) in 1 session\(s\) fail verification$/,
      );
      const json = await cli("verify", "--all", "--json");
      expect(json.code, json.stderr).toBe(1);
      const report = JSON.parse(json.stdout) as {
        ok: boolean;
        sessions: { sessionId: string; ok: boolean; failing: { runId: string }[] }[];
      };
      expect(report.ok).toBe(false);
      const listed = JSON.parse((await cli("sessions", "--json")).stdout) as {
        sessionId: string;
      }[];
      expect(report.sessions.map((session) => session.sessionId)).toEqual(
        listed.map((session) => session.sessionId),
      );
      expect(report.sessions.filter((session) => !session.ok)).toEqual([
        expect.objectContaining({
          sessionId: demo.sessionId,
          failing: [expect.objectContaining({ runId: demo.rootRunId, ok: false, badSeq: 1 })],
        }),
      ]);
    });

    it("delete refuses without --yes and with a run open, cancels open runs when told, and takes the session's blobs; collect-blobs takes the orphans", async () => {
      const sessionId = `delete-${options.sessionId}`;
      const crashed = new SessionRecorder({
        store,
        sessionId,
        actor: { type: "agent", id: "crashed" },
      });
      await crashed.startRun();
      const text = `A message long enough to be kept in the blob store ${"x".repeat(600)}`;
      await crashed.beforeModelCall({ request: { messages: [{ role: "user", content: text }] } });
      const refs = (await store.readSession({ sessionId })).events.flatMap(
        (event) => event.evidenceRefs ?? [],
      );
      expect(refs.length).toBeGreaterThan(0);
      const events = (await store.readSession({ sessionId })).events.length;

      const unconfirmed = await cli("delete", sessionId);
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toContain("nothing was deleted");
      expect(unconfirmed.stderr).toContain(`agent-ledger delete --yes`);
      expect(unconfirmed.stderr).toContain(`-- ${sessionId}`);
      const open = await cli("delete", sessionId, "--yes");
      expect(open.code, open.stderr).toBe(1);
      expect(open.stderr).toContain("open run");
      expect(open.stderr).toContain("--cancel-open");
      expect((await store.readSession({ sessionId })).events).toHaveLength(events);
      const badGrace = await cli("delete", sessionId, "--yes", "--blob-grace", "ten minutes");
      expect(badGrace.code).toBe(2);
      expect(badGrace.stderr).toContain("--blob-grace must be a duration");

      const deleted = await cli(
        "delete",
        sessionId,
        "--yes",
        "--cancel-open",
        "crashed; nobody will resume it",
        "--actor",
        "oncall",
        "--blob-grace",
        "0",
        "--json",
      );
      expect(deleted.code, deleted.stderr).toBe(0);
      expect(JSON.parse(deleted.stdout)).toEqual({
        sessionId,
        deletedEvents: events + 1,
        deletedRuns: 1,
        deletedBlobs: refs.length,
        keptBlobs: 0,
        cancelledRuns: [crashed.runId],
      });
      expect((await cli("inspect", sessionId)).code).toBe(3);
      expect((await cli("delete", sessionId, "--yes")).code).toBe(3);
      for (const ref of refs)
        await expect(store.getBlob(ref)).rejects.toMatchObject({ code: "not-found" });

      const orphanContent = `put and never named ${options.sessionId}`;
      const orphan = await store.putBlob(orphanContent);
      const young = await cli("collect-blobs", "--blob-grace", "1h");
      expect(young.code, young.stderr).toBe(0);
      expect(young.stdout).toContain("kept: those put within the last 1h");
      expect((await store.getBlob(orphan)).length).toBeGreaterThan(0);
      const dry = await cli("collect-blobs", "--blob-grace", "0", "--dry-run", "--json");
      expect(dry.code, dry.stderr).toBe(0);
      const counted = JSON.parse(dry.stdout);
      expect(counted.deletedBlobs).toBe(0);
      expect(counted.wouldDelete.blobs).toBeGreaterThanOrEqual(1);
      expect(counted.wouldDelete.bytes).toBeGreaterThanOrEqual(storedBytes([orphanContent]));
      expect((await store.getBlob(orphan)).length, "a dry run deletes nothing").toBeGreaterThan(0);
      const collected = await cli("collect-blobs", "--blob-grace", "0", "--json");
      expect(collected.code, collected.stderr).toBe(0);
      expect(JSON.parse(collected.stdout).deletedBlobs).toBe(counted.wouldDelete.blobs);
      await expect(store.getBlob(orphan)).rejects.toMatchObject({ code: "not-found" });
      // The demo session's blobs are named by its events: all still there.
      const exported = await cli("export", demo.sessionId);
      expect(exported.code, exported.stderr).toBe(0);
    });

    it("exits 3 for an unknown session", async () => {
      for (const command of ["inspect", "tail", "verify", "export"]) {
        const result = await cli(command, `missing-${options.sessionId}`);
        expect(result.code, command).toBe(3);
        expect(result.stderr).toContain("unknown session");
      }
      const deletion = await cli("delete", `missing-${options.sessionId}`, "--yes");
      expect(deletion.code).toBe(3);
      expect(deletion.stderr).toContain("unknown session");
      // An id with a bidi override is quoted in the message escaped, not obeyed.
      const hostile = await cli("inspect", "--", "gone\u202eder");
      expect(hostile.code).toBe(3);
      expect(hostile.stderr.includes("\u202e")).toBe(false);
      expect(hostile.stderr).toContain("gone\\u202eder");
    });

    const refused = options.refused;
    if (refused !== undefined)
      it("exits 3 for a database the server does not have, 2 for credentials it refuses", async () => {
        const missing = await runBin(["--store", refused.noDatabase, "sessions"]);
        expect(missing.code, missing.stderr).toBe(3);
        expect(missing.stderr).toContain("no ledger at");
        expect(missing.stderr).toContain("check the database name in the store URL");
        const denied = await runBin(["--store", refused.badCredentials, "sessions"]);
        expect(denied.code, denied.stderr).toBe(2);
        expect(denied.stderr).toContain("refused the store URL's credentials");
        // The password is never printed.
        expect(denied.stderr).not.toContain("wrong-pw");
        if (refused.noDatabaseForUser === undefined) return;
        // A misspelt database name in an application user's URL: it was told to check its user
        // and password, exit 2, where the same typo on PostgreSQL says to check the database.
        const typo = await runBin(["--store", refused.noDatabaseForUser(), "sessions"]);
        expect(typo.code, typo.stderr).toBe(3);
        expect(typo.stderr).toContain("no ledger at");
        expect(typo.stderr).toContain("check the database name in the store URL");
        expect(typo.stderr).not.toContain("check the user and password");
        expect(typo.stderr).not.toContain("stranger-pw");
      });

    const noLedger = options.noLedger;
    if (noLedger !== undefined)
      it("exits 3 where there is no ledger, and makes none there", async () => {
        for (const command of [
          ["sessions"],
          ["inspect", options.sessionId],
          ["serve"],
          ["delete", options.sessionId, "--yes"],
          ["collect-blobs"],
          ["upgrade"],
        ]) {
          const result = await runBin(["--store", noLedger.storeUrl, ...command]);
          expect(result.code, command[0]).toBe(3);
          expect(result.stderr).toContain("no ledger");
        }
        expect(await noLedger.leftovers()).toBe(0);
      });
  });
}
