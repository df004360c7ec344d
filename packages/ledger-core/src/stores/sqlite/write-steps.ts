import type { WriteStep } from "../sql/write-program.js";
import type { SqliteBackendState } from "./backend-state.js";
import { decodeBody, encodeBody } from "./body-codec.js";
import { collectBlobPage } from "./collect-blob-page.js";
import { lastCursor, lockedHead, moveHead } from "./locked-heads.js";
import { storeBlobs } from "./put-blobs.js";
import { refDigest } from "./ref-digest.js";
import type { Statements } from "./write-statements.js";

/** One step of a write program, inside the IMMEDIATE transaction, on the prepared statements. */
export function executeStep(
  state: SqliteBackendState,
  step: WriteStep,
  statements: Statements,
): unknown {
  switch (step.kind) {
    case "lock-head":
      // The IMMEDIATE transaction already holds the database's write lock.
      return lockedHead(state, step.sessionId, step.runId);
    case "find-events":
      return (
        statements.findEvents.all(step.sessionId, JSON.stringify(step.eventIds)) as {
          body: unknown;
        }[]
      ).map((row) => decodeBody(row.body));
    case "read-run":
      return (
        statements.readRun.all(step.sessionId, step.runId, step.uptoSeq) as { body: unknown }[]
      ).map((row) => decodeBody(row.body));
    case "reserve-cursors": {
      const last = lastCursor(state, step.sessionId, statements);
      if (last === 0) statements.insertSession.run(step.sessionId, step.now);
      state.heads.rememberCursor(step.sessionId, last + step.count);
      return last + step.count;
    }
    case "insert-events":
      for (const row of step.rows) {
        statements.insertEvent.run(
          row.sessionId,
          row.commitCursor,
          row.runId,
          row.seq,
          row.eventId,
          row.eventType,
          row.recordedAt,
          encodeBody(row.body),
        );
      }
      return undefined;
    case "put-blobs":
      storeBlobs(state, step.blobs);
      return undefined;
    case "index-refs":
      for (const ref of step.refs) statements.indexRef.run(refDigest(ref), step.sessionId);
      return undefined;
    case "lock-session":
      // The IMMEDIATE transaction already holds the database's write lock.
      if (statements.lockSession.get(step.sessionId) === undefined) return undefined;
      return (statements.lastCursor.get(step.sessionId) as number | null) ?? 0;
    case "open-runs":
      return (statements.openRuns.all(step.sessionId) as { runId: string }[]).map(
        (row) => row.runId,
      );
    case "collect-session-blobs": {
      const { sessionId, graceMs } = step;
      const refs = statements.countRefs.get(sessionId) as number;
      if (refs === 0) return { refs, deleted: 0 };
      const deleted = statements.collectSessionBlobs.run(sessionId, graceMs, sessionId).changes;
      return { refs, deleted };
    }
    case "collect-blobs":
      return collectBlobPage(step, statements);
    case "delete-session": {
      state.heads.forgetAll();
      const events = statements.deleteEvents.run(step.sessionId).changes;
      const runs = statements.deleteRuns.run(step.sessionId).changes;
      statements.deleteRefs.run(step.sessionId);
      statements.deleteSession.run(step.sessionId);
      return { events, runs };
    }
    case "write-head": {
      // Only a new run, or one that closes, writes its row; an open run's length and last
      // hash are its last event's (see schema.ts).
      const { sessionId, runId, head } = step;
      if (step.created) {
        // A run is created running: a batch that also closes it is recorded as closing below.
        statements.insertHead.run(sessionId, runId, "running", step.parentRunId, step.startedAt);
      }
      moveHead(state, sessionId, runId, head, statements);
      return undefined;
    }
  }
}
