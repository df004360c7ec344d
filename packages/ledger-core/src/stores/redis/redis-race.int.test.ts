import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { LedgerEvent } from "../../events/types.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { localClusterForTests } from "./testing/cluster-hooks.js";
import { clusterUrl, localClusterUnavailable } from "./testing/local-cluster.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");
const writerScript = fileURLToPath(
  new URL("../../../dist/stores/redis/testing/race-writer.js", import.meta.url),
);
const WRITERS = 8;
const PER_WRITER = 25;
const TOTAL = WRITERS * PER_WRITER;

function startWriter(args: string[]): {
  child: ChildProcess;
  ready: Promise<void>;
  done: Promise<string>;
} {
  const child = spawn(process.execPath, [writerScript, ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  let output = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    if (output.startsWith("ready\n")) markReady();
  });
  const done = new Promise<string>((resolve, reject) => {
    child.on("close", (code) => {
      if (code === 0) resolve(output.slice("ready\n".length).trim());
      else reject(new Error(`writer ${args[4]} exited with ${code}: ${output}`));
    });
  });
  return { child, ready, done };
}

/** Runs the writers while tailing the session by cursor; returns what the tailer saw. */
async function race(
  store: RedisEventStore,
  writerUrl: string,
  prefix: string,
  sessionId: string,
  runOf: (writer: number) => string,
): Promise<{ seen: LedgerEvent[]; conflicts: number }> {
  const writers = Array.from({ length: WRITERS }, (_, writer) =>
    startWriter([writerUrl, prefix, sessionId, runOf(writer), `w${writer}`, String(PER_WRITER)]),
  );
  await Promise.all(writers.map((writer) => writer.ready));
  for (const writer of writers) writer.child.stdin?.end("go\n");
  let finished = false;
  const all = Promise.all(writers.map((writer) => writer.done)).finally(() => {
    finished = true;
  });
  all.catch(() => {});
  const seen: LedgerEvent[] = [];
  let after = 0;
  try {
    // Tail until every writer exited and a last read found nothing new.
    for (;;) {
      const wasFinished = finished;
      const page = await store.readSession({ sessionId, after, limit: 16 });
      seen.push(...page.events);
      after = page.nextCursor;
      if (page.events.length === 0) {
        if (wasFinished) break;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }
  } finally {
    for (const writer of writers) if (writer.child.exitCode === null) writer.child.kill();
  }
  const reports = (await all).map(
    (line) => JSON.parse(line) as { conflicts: number; refused: number },
  );
  // Each writer sent two batches the store refused whole every fifth append (race-writer.ts).
  expect(reports.map((report) => report.refused)).toEqual(
    Array.from({ length: WRITERS }, () => Math.floor(PER_WRITER / 5) * 2),
  );
  return { seen, conflicts: reports.reduce((sum, report) => sum + report.conflicts, 0) };
}

function checkSeen(seen: LedgerEvent[]): void {
  expect(seen.map((event) => event.commitCursor)).toEqual(
    Array.from({ length: TOTAL }, (_, index) => index + 1),
  );
  const ids = new Set(seen.map((event) => event.eventId));
  expect(ids.size).toBe(TOTAL);
  // Nothing of a refused batch, not even its valid first event.
  expect([...ids].filter((id) => id.startsWith("refused-"))).toEqual([]);
  for (let writer = 0; writer < WRITERS; writer++) {
    // Each writer appended its events one after another: they commit in that order.
    const mine = seen.filter((event) => event.eventId.startsWith(`w${writer}-`));
    expect(mine.map((event) => event.eventId)).toEqual(
      Array.from({ length: PER_WRITER }, (_, index) => `w${writer}-${index}`),
    );
  }
}

function checkRun(events: LedgerEvent[], length: number): void {
  expect(events.map((event) => event.seq)).toEqual(Array.from({ length }, (_, index) => index));
  events.forEach((event, index) => {
    expect(event.prevHash).toBe(index === 0 ? null : events[index - 1]?.hash);
  });
}

/**
 * The race cases against one target, under one key prefix: the target gives the store the test
 * reads with and the URL its writer processes open (valid once the target's servers are up).
 */
function raceCases(
  label: string,
  prefix: string,
  target: () => { store: RedisEventStore; writerUrl: string },
): void {
  it("has the compiled writer script (run tsc -b first)", () => {
    expect(existsSync(writerScript)).toBe(true);
  });

  it("8 processes appending to one run, with batches that must be refused whole: gap-free seqs and cursors, each event once, nothing refused stored", async () => {
    const { store, writerUrl } = target();
    const { seen, conflicts } = await race(store, writerUrl, prefix, "one-run", () => "shared");
    console.info(`[${label} race] one run: ${TOTAL} events, ${conflicts} conflicts retried`);
    checkSeen(seen);
    const run = await store.readRun({ sessionId: "one-run", runId: "shared" });
    checkRun(run.events, TOTAL);
    expect(run.events.map((event) => event.eventId).sort()).toEqual(
      seen.map((event) => event.eventId).sort(),
    );
    expect(await store.runHead({ sessionId: "one-run", runId: "shared" })).toMatchObject({
      length: TOTAL,
      lastHash: run.events[TOTAL - 1]?.hash,
    });
  });

  it("8 processes appending to separate runs of one session", async () => {
    const { store, writerUrl } = target();
    const { seen } = await race(store, writerUrl, prefix, "many-runs", (writer) => `run-${writer}`);
    checkSeen(seen);
    for (let writer = 0; writer < WRITERS; writer++) {
      const run = await store.readRun({ sessionId: "many-runs", runId: `run-${writer}` });
      checkRun(run.events, PER_WRITER);
      expect(run.events.every((event) => event.eventId.startsWith(`w${writer}-`))).toBe(true);
    }
    expect((await store.listRuns("many-runs")).length).toBe(WRITERS);
    const [summary] = (await store.listSessions({ after: "many-runr", limit: 1 })).sessions;
    expect(summary).toMatchObject({ sessionId: "many-runs", eventCount: TOTAL });
  });
}

describe.skipIf(!available)("RedisEventStore across processes", () => {
  const prefix = freshPrefix("race");
  const store = new RedisEventStore({ url, keyPrefix: prefix });
  raceCases("redis", prefix, () => ({ store, writerUrl: url }));

  afterAll(async () => {
    await store.close();
    await deleteKeys(url, prefix);
  });
});

// The same races on a Redis Cluster of three masters: the writers open their own Cluster client.
const clusterUnavailable = await localClusterUnavailable();

describe.skipIf(clusterUnavailable !== undefined)(
  "RedisEventStore on a Cluster across processes",
  () => {
    const local = localClusterForTests();
    let store: RedisEventStore | undefined;
    const prefix = freshPrefix("race");
    raceCases("redis cluster", prefix, () => {
      store ??= new RedisEventStore({ client: local.client(), keyPrefix: prefix });
      return { store, writerUrl: clusterUrl(local.cluster()) };
    });
    afterAll(async () => {
      await store?.close();
    });
  },
);
