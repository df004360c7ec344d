import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import { storedBytes } from "@agent-ledger/core/testing";
import { beforeAll, expect, it } from "vitest";
import type { CliSuite } from "./cli-suite.test.data.js";
import { type DemoSession, runBin } from "./session-fixture.test.data.js";

/**
 * The cases of `describeCliCommands` that change the ledger or run after a change: resolve,
 * approve, tampering then verify, delete and collect-blobs, and the exit codes of what is not
 * there or refused. Registered after the reading cases, in the same describe, on the same store
 * and demo session.
 */
export function writeCommandCases(suite: CliSuite): void {
  const { options, cli } = suite;
  let store: EventStore;
  let demo: DemoSession;
  beforeAll(() => {
    ({ store, demo } = suite.opened());
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
}
