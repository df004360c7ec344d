import { setTimeout as sleep } from "node:timers/promises";
import { expect, vi } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import type { EventStore } from "../../store/event-store.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { MysqlBackend } from "../mysql/mysql-backend.js";
import { PostgresBackend } from "../postgres/postgres-backend.js";
import { acrossStores } from "./testing/across-stores.js";
import { blobRowHarness, type Hold, until } from "./testing/blob-row-harness.js";
import type { RacerTarget } from "./testing/racer-store.js";

// A put of a blob that is already stored waits for its row when another transaction holds it
// (a collection locking it, then deleting it; another writer). The retention contract ("put a
// blob, then name it within the grace") needs the stamp the put leaves to be taken once the
// row is its own, not as its statement began: a put that waited past the grace and stamped
// the start left a blob the next collection deleted, right after the put answered.
// The row is held here by a third connection, longer than the grace, while the put waits.

const GRACE_MS = 300;

/**
 * How the blob is stored again: a put without a session, an append that carries it to a new
 * run (the transactional program) or to a run at the head the writer knows (its one statement:
 * PostgreSQL's append statement, MariaDB's block), or appends gathered in one statement (group
 * commit: the function migration 0007 installs on PostgreSQL, a block of several appends on
 * MariaDB), one of which carries it.
 */
type Path = "putBlob" | "append" | "append at its head" | "gathered appends";

/**
 * Runs the gathered appends go to, each started by the writer first (appends at a head it
 * knows are those it gathers). The first append sent goes out at once, alone (no statement of
 * the store runs yet); those sent with it go at the end of the turn, together: all of them on
 * PostgreSQL, shared out over up to four statements on MariaDB (WriteCoalescer's balanced
 * share), the first of which takes at least two once five wait. The second append carries the
 * blob, so its statement holds several appends (checked).
 */
const GATHERED = 9;

async function checkStamp(target: RacerTarget, path: Path, how: Hold): Promise<void> {
  // Watched before the stores are made: a store binds the method when constructed.
  const batches = vi.spyOn(
    (target.kind === "postgres" ? PostgresBackend : MysqlBackend).prototype,
    "appendAtHeads",
  );
  const harness = await blobRowHarness(target);
  const { writer, collector } = harness;
  let blocker: Awaited<ReturnType<typeof harness.hold>> | undefined;
  try {
    await writer.init();
    await collector.init();
    const content = `stored again ${uuidv7()}`;
    const ref = `sha256:${sha256Hex(content)}`;
    // PostgreSQL gathers the appends of one session, MariaDB those of any.
    const session = `s-${uuidv7()}`;
    const places = Array.from({ length: GATHERED }, (_, index) =>
      target.kind === "mysql"
        ? { sessionId: `s${index}-${uuidv7()}`, runId: "r" }
        : { sessionId: session, runId: `r${index}` },
    );
    const started =
      path === "gathered appends"
        ? places
        : path === "append at its head"
          ? places.slice(0, 1)
          : [];
    for (const place of started)
      await writer.append({ ...place, expectedSeq: 0, events: [{ type: "run.started" }] });
    await writer.putBlob(content);
    await sleep(GRACE_MS + 100);

    blocker = await harness.hold(ref, how);
    const stored = storeAgain(writer, path, content, ref, places);
    // Waited for by its text: the MariaDB blocks of the other gathered appends are counted
    // too, for as long as they insert their events.
    const waits = waitingStatement(target, path);
    await until("the put waiting", async () => {
      const statements = await harness.waitingStatements();
      return statements.length === 1 && waits.test(statements[0] ?? "");
    });
    if (path === "gathered appends" || path === "append at its head") {
      // The blob's append went out with others (gathered) or alone, its statement still running.
      const carrier = batches.mock.calls.findIndex(([appends]) =>
        appends.some((append) => append.blobs.length > 0),
      );
      const appends = batches.mock.calls[carrier]?.[0].length;
      if (path === "gathered appends")
        expect(appends, "appends with the blob's").toBeGreaterThan(1);
      else expect(appends, "appends with the blob's").toBe(1);
      expect(batches.mock.settledResults[carrier]?.type, "their statement").toBe("incomplete");
    }
    await sleep(GRACE_MS + 50);
    // Read before the release: the put gets the row after it, so its stamp can be no earlier.
    // A stamp read as the put's statement began is the grace and more before it. Neither
    // depends on how long this machine takes between two steps (an age under the grace, asked
    // after the put, failed once in 35 runs on a busy machine).
    const released = await harness.nowMs();
    await blocker.release();
    blocker = undefined;
    await stored;

    const stamp = await harness.stampMs(ref);
    expect(stamp, "the stamp: once the put had the row, not before").toBeGreaterThanOrEqual(
      released,
    );
    // A collection right after keeps the blob (an append's claim would keep it anyway, so
    // only the stamp tells there): "right after" while the server's clock says less than the
    // grace passed since the stamp.
    if (path === "putBlob") await collector.collectBlobs({ blobGraceMs: GRACE_MS });
    const collectedBy = await harness.nowMs();
    if (collectedBy - (stamp ?? 0) < GRACE_MS)
      expect(
        await blobExists(writer, ref),
        `blob kept (stamped ${collectedBy - (stamp ?? 0)} ms before)`,
      ).toBe(true);
  } finally {
    batches.mockRestore();
    await blocker?.release();
    await writer.close();
    await collector.close();
    await harness.close();
  }
}

/**
 * The statement that waits for the blob's row, by its text, on the one-statement paths: on
 * MariaDB the block's statement on the blobs table (the only blob the writer stores meanwhile);
 * on PostgreSQL the append's statement, or the call of 0007's function.
 */
function waitingStatement(target: RacerTarget, path: Path): RegExp {
  if (path !== "gathered appends" && path !== "append at its head") return /(?:)/;
  if (target.kind === "mysql") return /\bblobs\b/;
  return path === "gathered appends" ? /agent_ledger_append_blobs_at_heads\(/ : /^WITH h AS/;
}

/**
 * Stores `content` (`ref`) again by `path`; a gathered append goes to each of `places`, an
 * append at its head to the first.
 */
async function storeAgain(
  writer: EventStore,
  path: Path,
  content: string,
  ref: string,
  places: { sessionId: string; runId: string }[],
): Promise<void> {
  if (path === "putBlob") await writer.putBlob(content);
  else if (path === "append at its head")
    await writer.append({
      ...(places[0] as { sessionId: string; runId: string }),
      expectedSeq: 1,
      events: [{ type: "x.carried", evidenceRefs: [ref] }],
      blobs: [content],
    });
  else if (path === "append")
    await writer.append({
      sessionId: `s-${uuidv7()}`,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", evidenceRefs: [ref] }],
      blobs: [content],
    });
  else {
    const written = await Promise.all(
      places.map((place, index) =>
        writer.append({
          ...place,
          expectedSeq: 1,
          ...(index === 1
            ? { events: [{ type: "x.carried", evidenceRefs: [ref] }], blobs: [content] }
            : { events: [{ type: "x.plain" }] }),
        }),
      ),
    );
    expect(written.map((result) => result.events.length)).toEqual(places.map(() => 1));
  }
}

for (const path of ["putBlob", "append", "append at its head", "gathered appends"] as const)
  for (const how of ["lock", "delete"] as const)
    await acrossStores(
      {
        topic: `${path} of a stored blob whose row another transaction holds (${how}) past the grace`,
        test: "stamps the blob once it has the row: a collection right after keeps it",
        label: "stamp_wait",
        kinds: ["postgres", "mysql"],
      },
      (target) => checkStamp(target, path, how),
    );
