import { join } from "node:path";
import { type EventStore, openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatBytes } from "../format.js";
import { recordedEarlier } from "../recorded-earlier.test.data.js";
import { runBin } from "../session-fixture.test.data.js";
import { deleteOneSession, WrittenSince } from "./session-deletion.js";

// prune is listSessions, deleteSession and collectBlobs, each of which every store passes the
// conformance suite for; here the command's own choices, on a SQLite file of its own: which
// sessions are old enough, the dry run, the sessions skipped with a run open, the blobs.
describe("agent-ledger prune", () => {
  const storeUrl = `sqlite:${join(scratchDirectory("agent-ledger-prune-", { beforeAll, afterAll }), "l.db")}`;
  const cli = (...args: string[]) => runBin(["--store", storeUrl, ...args]);
  let store: EventStore;
  let cutoff = "";
  let oldRefs: string[] = [];
  let openRunId = "";

  /** A session with one model call whose message is kept in the blob store; `close` ends its run. */
  async function record(sessionId: string, close: boolean): Promise<SessionRecorder> {
    const recorder = new SessionRecorder({ store, sessionId, actor: { type: "agent", id: "a" } });
    await recorder.startRun();
    const content = `${sessionId}: ${"a message kept in the blob store ".repeat(30)}`;
    const call = await recorder.beforeModelCall({
      request: { messages: [{ role: "user", content }] },
    });
    await recorder.modelCompleted(call, { text: "ok" });
    if (close) await recorder.completeRun("done");
    return recorder;
  }

  const refsOf = async (sessionId: string) =>
    (await store.readSession({ sessionId })).events.flatMap((event) => event.evidenceRefs ?? []);
  const sessionIds = async () =>
    (await store.listSessions()).sessions.map((session) => session.sessionId).sort();

  beforeAll(async () => {
    store = await openStore(storeUrl);
    // Old: 10 minutes ago; the cutoff 5 minutes ago, for prune refuses one within the last minute.
    await recordedEarlier(10 * 60_000, async () => {
      await record("old-closed", true);
      openRunId = (await record("old-open", false)).runId;
    });
    oldRefs = await refsOf("old-closed");
    expect(oldRefs.length).toBeGreaterThan(0);
    cutoff = new Date(Date.now() - 5 * 60_000).toISOString();
    await record("recent", true);
  });
  afterAll(async () => {
    await store?.close();
  });

  it("refuses without exactly one cutoff and one of --yes and --dry-run, before opening the store", async () => {
    // A second ago, and asked first: each refusal below is a process of its own, and on a busy
    // machine the list takes longer than the minute this time must stay within.
    const aSecondAgo = new Date(Date.now() - 1_000).toISOString();
    for (const [args, message] of [
      // As --older-than 1s: every closed session but one written that moment would go.
      [
        ["--before", aSecondAgo, "--dry-run"],
        `--before "${aSecondAgo}" is within the last 1m, which would delete every closed session`,
      ],
      [["--yes"], "one of --older-than"],
      [
        ["--older-than", "1h", "--before", cutoff, "--yes"],
        "one of --older-than and --before, not both",
      ],
      [["--older-than", "1h"], "one of --dry-run"],
      [["--older-than", "1h", "--yes", "--dry-run"], "one of --dry-run"],
      [["--older-than", "a while", "--yes"], "--older-than must be a duration"],
      // A bare number is not read as milliseconds: 30 would have deleted every closed session.
      [["--older-than", "30", "--yes"], "--older-than needs a unit: 30d for days"],
      // Under a minute spares no closed session, as a --before in the future: no hint to write 0d.
      [
        ["--older-than", "0", "--yes"],
        '--older-than "0" is under 1m, which would delete every closed session',
      ],
      [
        ["--older-than", "0d", "--dry-run"],
        '--older-than "0d" is under 1m, which would delete every closed session',
      ],
      [
        ["--older-than", "1s", "--yes"],
        '--older-than "1s" is under 1m, which would delete every closed session',
      ],
      [["--older-than", "59999ms", "--yes"], "is under 1m"],
      [["--before", "last tuesday", "--yes"], "--before must be an ISO 8601"],
      // Not March 2, nor a time past midnight.
      [
        ["--before", "2026-02-30", "--yes"],
        '--before must be an ISO 8601 date or time that exists (2026-01-31, 2026-01-31T12:00:00Z), not "2026-02-30"',
      ],
      [["--before", "2026-01-31T24:30:00Z", "--yes"], "that exists"],
      [
        ["--before", "2999-01-01", "--yes"],
        '--before "2999-01-01" is in the future, which would delete every closed session',
      ],
      [["--before", cutoff, "--yes", "--cancel-open", " "], "--cancel-open needs a reason"],
    ] as const) {
      const result = await runBin(["--store", "sqlite:/no/such/ledger.db", "prune", ...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr, args.join(" ")).toContain(message);
    }
    expect(await sessionIds()).toEqual(["old-closed", "old-open", "recent"]);
  });

  it("a dry run lists the sessions older than the cutoff, with their open runs, and deletes nothing", async () => {
    const result = await cli("prune", "--before", cutoff, "--dry-run");
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^would delete old-closed {2}\d+ events, last at /);
    expect(lines[1]).toContain("would delete old-open");
    expect(lines[1]).toContain("1 run(s) open: skipped without --cancel-open");
    // The blobs were put a moment ago: within the default grace, none would go yet.
    // The count of the sessions listed above first, then the blobs that would go with them.
    expect(lines[2]).toBe(`2 session(s) with no event since ${cutoff}`);
    expect(lines[3]).toBe(
      "with them 0 blob(s), 0 bytes stored, that no session left would reference (kept: those put within the last 10m); nothing was deleted (dry run)",
    );
    const json = JSON.parse((await cli("prune", "--before", cutoff, "--dry-run", "--json")).stdout);
    expect(json.sessions.map((session: { sessionId: string }) => session.sessionId)).toEqual([
      "old-closed",
      "old-open",
    ]);
    expect(json.wouldDelete).toEqual({ blobs: 0, bytes: 0 });
    // Past the grace: the blobs of the session prune would delete, not those of the one it
    // would skip with its run open, nor the recent session's.
    const dryJson = (...args: string[]) =>
      cli("prune", "--before", cutoff, "--dry-run", "--json", "--blob-grace", "0", ...args).then(
        (done) => JSON.parse(done.stdout).wouldDelete as { blobs: number; bytes: number },
      );
    const closedOnly = await dryJson();
    expect(closedOnly.blobs).toBe(oldRefs.length);
    expect(closedOnly.bytes).toBeGreaterThan(0);
    const withOpen = await dryJson("--cancel-open", "crashed");
    expect(withOpen.blobs).toBe(oldRefs.length + (await refsOf("old-open")).length);
    const zeroGrace = await cli("prune", "--before", cutoff, "--dry-run", "--blob-grace", "0");
    expect(zeroGrace.stdout).toContain(
      `with them ${oldRefs.length} blob(s), ${formatBytes(closedOnly.bytes)} stored, that no session left would reference (kept: those put within the last 0ms); nothing was deleted (dry run)`,
    );
    // Every session is younger than an hour: nothing to list.
    const young = await cli("prune", "--older-than", "1h", "--dry-run");
    expect(young.stdout).toContain("0 session(s) with no event since");
    expect(await sessionIds()).toEqual(["old-closed", "old-open", "recent"]);
  });

  it("deletes the old closed session and its blobs, skips the one with a run open (exit 1), and keeps the recent one", async () => {
    const result = await cli("prune", "--before", cutoff, "--yes", "--blob-grace", "0", "--json");
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.deleted).toHaveLength(1);
    expect(report.deleted[0]).toMatchObject({
      sessionId: "old-closed",
      deletedRuns: 1,
      deletedBlobs: oldRefs.length,
      cancelledRuns: [],
    });
    expect(report.skipped).toEqual([
      { sessionId: "old-open", reason: expect.stringContaining("open run") },
    ]);
    // Said to a person: no JSON path of the store's argument check in it.
    expect(report.skipped[0].reason).not.toContain("$.sessionId");
    expect(await sessionIds()).toEqual(["old-open", "recent"]);
    for (const ref of oldRefs)
      await expect(store.getBlob(ref)).rejects.toMatchObject({ code: "not-found" });
    // The recent session's blobs are named by its events: still there.
    for (const ref of await refsOf("recent"))
      expect((await store.getBlob(ref)).length).toBeGreaterThan(0);

    const text = await cli("prune", "--before", cutoff, "--yes");
    expect(text.code).toBe(1);
    expect(text.stdout).toContain("skipped old-open: ");
    expect(text.stdout).toContain('add --cancel-open "reason" if no agent will resume them');
  });

  it("with --cancel-open, cancels the open run as a human and deletes that session too", async () => {
    const result = await cli(
      "prune",
      "--before",
      cutoff,
      "--yes",
      "--cancel-open",
      "agent crashed, never resumed",
      "--actor",
      "oncall",
      "--json",
    );
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.deleted).toEqual([
      expect.objectContaining({ sessionId: "old-open", cancelledRuns: [openRunId] }),
    ]);
    expect(report.skipped).toEqual([]);
    expect(await sessionIds()).toEqual(["recent"]);
  });
});

// What prune does per session once it has judged it old: the session is deleted only as it was
// when judged. An agent that comes back to it in between (its next call, a new run) keeps it.
describe("deleting a session judged at an event count (prune's deletion)", () => {
  const folder = scratchDirectory("agent-ledger-prune-race-", { beforeAll, afterAll });
  const human = { type: "human", id: "oncall" } as const;
  const options = (cancelReason?: string) => ({ cancelReason, actor: human, blobGrace: {} });

  async function judged(name: string, open: boolean) {
    const store = await openStore(`sqlite:${join(folder, `${name}.db`)}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: name,
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.recordInput("hello");
    if (!open) await recorder.completeRun("done");
    const [session] = (await store.listSessions()).sessions;
    return { store, recorder, eventCount: session?.eventCount as number };
  }

  it("keeps a session an agent wrote to after it was judged: nothing deleted", async () => {
    const { store, eventCount } = await judged("came-back", false);
    const again = new SessionRecorder({
      store,
      sessionId: "came-back",
      actor: { type: "agent", id: "a" },
    });
    await again.startRun();
    await expect(
      deleteOneSession(store, "came-back", options(), eventCount),
    ).rejects.toBeInstanceOf(WrittenSince);
    expect((await store.readSession({ sessionId: "came-back" })).events).toHaveLength(4);
    // Judged again at its count now, it goes.
    await again.completeRun("done");
    await expect(deleteOneSession(store, "came-back", options(), 5)).resolves.toMatchObject({
      deletedEvents: 5,
    });
    await store.close();
  });

  it("with --cancel-open, cancels no run started after it was judged, and deletes nothing", async () => {
    const { store, eventCount } = await judged("live", true);
    const live = new SessionRecorder({
      store,
      sessionId: "live",
      actor: { type: "agent", id: "b" },
    });
    await live.startRun();
    const error = await deleteOneSession(store, "live", options("crashed"), eventCount).catch(
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(WrittenSince);
    expect((error as Error).message).toContain("2 events then, 3 now");
    const runs = await store.listRuns("live");
    expect(runs.map((run) => run.status)).toEqual(["running", "running"]);
    // The live agent goes on writing.
    await expect(live.recordInput("still here")).resolves.toBeDefined();
    await store.close();
  });

  it("with --cancel-open, leaves open a run an agent writes to right after it was found unchanged", async () => {
    const { store, recorder, eventCount } = await judged("written-then", true);
    // The agent's next event lands between prune's check and its cancellation.
    let checks = 0;
    const racing = new Proxy(store, {
      get(target, key) {
        if (key !== "readSession") {
          // The store's own methods on the store (its private fields are not the proxy's).
          const value = Reflect.get(target, key, target);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return async (request: Parameters<typeof store.readSession>[0]) => {
          const page = await target.readSession(request);
          if (++checks === 1) await recorder.recordInput("still working");
          return page;
        };
      },
    });
    await expect(
      deleteOneSession(racing, "written-then", options("crashed"), eventCount),
    ).rejects.toBeInstanceOf(WrittenSince);
    expect((await store.listRuns("written-then")).map((run) => run.status)).toEqual(["running"]);
    await expect(recorder.recordInput("and on")).resolves.toBeDefined();
    await store.close();
  });

  it("with --cancel-open, cancels the runs open when it was judged and deletes the session", async () => {
    const { store, eventCount } = await judged("crashed", true);
    const deletion = await deleteOneSession(store, "crashed", options("never resumed"), eventCount);
    expect(deletion).toMatchObject({ deletedEvents: 3, deletedRuns: 1 }); // its 2 and the cancellation
    expect(deletion.cancelledRuns).toHaveLength(1);
    await store.close();
  });
});
