import {
  type CollectBlobsOptions,
  DEFAULT_BLOB_GRACE_MS,
  type EventStore,
  LedgerError,
  stopBeforeNextPage,
} from "@agent-ledger/core";
import { EXIT_CODES, usageError } from "../errors.js";
import { formatBytes, terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import { sessionPages } from "../store.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { durationOption, formatDuration, graceText } from "./session-args.js";
import {
  DELETION_ARGS,
  deleteOneSession,
  deletionOptions,
  OpenRunRefusal,
  openRuns,
  type SessionDeletion,
  WrittenSince,
} from "./session-deletion.js";

export const pruneHelp = `agent-ledger prune (--older-than <duration> | --before <time>) (--yes | --dry-run) [--cancel-open "reason"] [--blob-grace <duration>] [--actor <name>] [--json]
  Retention by age: deletes every session whose last event is older than --older-than (30d,
  12h, 90m: a unit is needed; at least 1m) or was recorded before --before (an ISO 8601 date
  or time at least 1m ago), by the events' own
  times, as delete does one; then the blobs no existing session references (collect-blobs).
  A session with a run still open is skipped and listed (exit 1), unless --cancel-open cancels
  its open runs first. A session written to after prune looked at it is kept (the store checks,
  under the lock the deletion takes, that it still holds what prune judged). --dry-run lists the sessions it would delete as it finds them (--json: once all are found), then the blobs
  that would go with them and their stored bytes (--json: "wouldDelete": { "blobs", "bytes" };
  not those a session it keeps references, nor those put within --blob-grace), and deletes
  nothing; one of --yes and --dry-run is needed (exit 2).
  --blob-grace as for delete (default ${formatDuration(DEFAULT_BLOB_GRACE_MS)}). --json prints what was done as JSON.
  Ctrl-C stops it (exit 130), saying how far it got: --yes before its next deletion (each
  session deleted was said as it went) or page of blobs, nothing more deleted; --dry-run
  between sessions and pages.`;

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `--before` in epoch ms, or NaN: an ISO 8601 date or time whose fields are a real date and
 * time (Date.parse takes 2026-02-30 for March 2).
 */
function isoTime(text: string): number {
  const match = ISO_TIME.exec(text);
  if (match === null) return Number.NaN;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(year as number, (month as number) - 1, day as number));
  const realDay =
    date.getUTCFullYear() === year && date.getUTCMonth() + 1 === month && date.getUTCDate() === day;
  const realTime = (hour as number) < 24 && (minute as number) < 60 && (second as number) < 60;
  return realDay && realTime ? Date.parse(text) : Number.NaN;
}

/**
 * The youngest `--older-than` taken, and the latest `--before` (so long ago): a cutoff within
 * the last minute deletes every closed session but one written that moment, as a `--before` in
 * the future deletes them all.
 */
const MIN_OLDER_THAN_MS = 60_000;

/** What a cutoff that spares no closed session is refused with. */
const EVERY_CLOSED_SESSION =
  "which would delete every closed session: give an age (30d) or a past time, or delete sessions by id with agent-ledger delete";

/** The cutoff in epoch ms from `--older-than` or `--before` (exactly one). */
function cutoffOf(olderThan: string | undefined, before: string | undefined): number {
  if (olderThan !== undefined && before !== undefined)
    throw usageError("prune takes one of --older-than and --before, not both");
  if (olderThan === undefined && before === undefined)
    throw usageError(
      "prune needs one of --older-than <duration> (e.g. 30d) and --before <time> (e.g. 2026-01-31)",
    );
  if (olderThan !== undefined) {
    // A bare 0 is no age in any unit: refused as such, not with a hint to write 0d.
    const age = /^0+$/.test(olderThan.trim())
      ? 0
      : (durationOption("older-than", olderThan, { unit: "required" }) as number);
    if (age < MIN_OLDER_THAN_MS)
      throw usageError(
        `--older-than ${JSON.stringify(olderThan)} is under ${formatDuration(MIN_OLDER_THAN_MS)}, ${EVERY_CLOSED_SESSION}`,
      );
    return Date.now() - age;
  }
  const text = before as string;
  const at = isoTime(text);
  if (Number.isNaN(at))
    throw usageError(
      `--before must be an ISO 8601 date or time that exists (2026-01-31, 2026-01-31T12:00:00Z), not ${JSON.stringify(text)}`,
    );
  // Every session's last event is before a time to come: all closed ones would go; and all
  // but one written that moment before a time within the last minute, as --older-than 30s.
  const now = Date.now();
  if (at > now)
    throw usageError(`--before ${JSON.stringify(text)} is in the future, ${EVERY_CLOSED_SESSION}`);
  if (at > now - MIN_OLDER_THAN_MS)
    throw usageError(
      `--before ${JSON.stringify(text)} is within the last ${formatDuration(MIN_OLDER_THAN_MS)}, ${EVERY_CLOSED_SESSION}`,
    );
  return at;
}

interface Candidate {
  sessionId: string;
  updatedAt: string;
  eventCount: number;
  /** Its runs still open (a dry run looks). */
  openRuns?: string[];
}

/**
 * The sessions whose last event was recorded before `cutoff` (epoch ms), in id order, a
 * `listSessions` page at a time (a page may hold none): the caller sees Ctrl-C between pages.
 */
async function* candidatePages(store: EventStore, cutoff: number): AsyncGenerator<Candidate[]> {
  for await (const page of sessionPages(store)) {
    const found: Candidate[] = [];
    for (const { sessionId, updatedAt, eventCount } of page)
      if (Date.parse(updatedAt) < cutoff) found.push({ sessionId, updatedAt, eventCount });
    yield found;
  }
}

export async function pruneCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs("prune", {
    args: context.args,
    options: {
      ...DELETION_ARGS,
      "older-than": { type: "string" },
      before: { type: "string" },
      "dry-run": { type: "boolean" },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0)
    throw usageError("usage: agent-ledger prune --older-than <duration> (--yes | --dry-run)");
  const cutoff = cutoffOf(values["older-than"], values.before);
  const options = deletionOptions(values, context.io.env);
  const { cancelReason } = options;
  const dryRun = values["dry-run"] === true;
  if (dryRun === (values.yes === true))
    throw usageError(
      "prune needs one of --dry-run (list what would be deleted) and --yes (delete it)",
    );
  const store = await context.openStore();
  const { signal } = context.io;
  const cutoffText = new Date(cutoff).toISOString();
  if (dryRun)
    return await dryRunList(context, store, {
      cutoff,
      json: values.json,
      cancelReason,
      blobGrace: options.blobGrace,
    });
  const candidates: Candidate[] = [];
  for await (const page of candidatePages(store, cutoff)) {
    // A turn of the event loop between pages, for a Ctrl-C to be seen on SQLite (io.ts).
    if (await stopBeforeNextPage(signal))
      return await interrupted(
        context.io.stderr,
        "prune",
        `while listing the sessions to delete (${candidates.length} found so far); nothing was deleted`,
      );
    candidates.push(...page);
  }
  const deleted: SessionDeletion[] = [];
  const skipped: { sessionId: string; reason: string }[] = [];
  // Written since they were judged old: no longer candidates, so kept without failing.
  const kept: { sessionId: string; reason: string }[] = [];
  // Each session's line as it is done: a prune stopped part way has said what it deleted.
  const said = (line: string) =>
    values.json ? Promise.resolve() : writeOut(context.io.stdout, `${terminalLine(line)}\n`);
  for (const candidate of candidates) {
    // A turn of the event loop first: on SQLite every deletion is synchronous, and a Ctrl-C
    // (SIGINT, SIGTERM) is seen only between turns. Stopped, it deletes nothing more.
    if (await stopBeforeNextPage(signal))
      return await pruneInterrupted(
        context,
        `after deleting ${deleted.length} of ${candidates.length} session(s)`,
      );
    const { sessionId } = candidate;
    try {
      // Deleted only at the count it was judged by: the store checks it under its lock.
      const one = await deleteOneSession(store, sessionId, options, candidate.eventCount);
      deleted.push(one);
      await said(
        `deleted ${sessionId}  ${one.deletedEvents} events${one.cancelledRuns.length > 0 ? `, ${one.cancelledRuns.length} open run(s) cancelled` : ""}`,
      );
    } catch (error) {
      if (error instanceof OpenRunRefusal) {
        skipped.push({ sessionId, reason: error.message });
        await said(`skipped ${sessionId}: ${error.message}`);
      } else if (error instanceof WrittenSince) {
        kept.push({ sessionId, reason: error.message });
        await said(`kept ${sessionId}: ${error.message}`);
      }
      // Deleted meanwhile (another prune, a delete): nothing left to do.
      else if (!LedgerError.isInstance(error, "not-found")) throw error;
    }
  }
  // The sweep over every blob of the store stops between its pages too (collectBlobs' signal).
  const collected = await store.collectBlobs(
    signal ? { ...options.blobGrace, signal } : options.blobGrace,
  );
  if (collected.stopped)
    return await pruneInterrupted(
      context,
      `after deleting ${deleted.length} of ${candidates.length} session(s), then ${collected.deletedBlobs} blob(s) no existing session references while collecting them`,
    );
  const collectedBlobs = collected.deletedBlobs;
  const sum = (key: "deletedEvents" | "deletedRuns" | "deletedBlobs") =>
    deleted.reduce((total, one) => total + one[key], 0);
  await writeOut(
    context.io.stdout,
    values.json
      ? `${terminalJson(JSON.stringify({ before: cutoffText, deleted, skipped, kept, collectedBlobs }, null, 2))}\n`
      : `${[
          `deleted ${deleted.length} session(s) with no event since ${cutoffText}: ${sum("deletedEvents")} events, ${sum("deletedRuns")} runs, ${sum("deletedBlobs") + collectedBlobs} blobs`,
          ...(skipped.length > 0
            ? [
                `skipped ${skipped.length} with a run open: add --cancel-open "reason" if no agent will resume them`,
              ]
            : []),
        ]
          .map(terminalLine)
          .join("\n")}\n`,
  );
  return skipped.length > 0 ? EXIT_CODES.failure : EXIT_CODES.ok;
}

function pruneInterrupted(context: CommandContext, when: string): Promise<number> {
  return interrupted(context.io.stderr, "prune", `${when}; nothing more was deleted`);
}

/**
 * `prune --dry-run`: each session that would go printed as it is found (text), with whether a
 * run of it is open; then the blobs a prune would delete with them: a collectBlobs dry run that
 * counts those sessions as deleted (not one skipped for a run open), so blobs they share with
 * each other count, and the orphans the prune's pass takes. --json prints its document once all
 * are found, with `wouldDelete: { blobs, bytes }`. Ctrl-C stops it between sessions and between
 * pages (exit 130); what was printed stays.
 */
async function dryRunList(
  context: CommandContext,
  store: EventStore,
  options: {
    cutoff: number;
    json: boolean | undefined;
    cancelReason: string | undefined;
    blobGrace: CollectBlobsOptions;
  },
): Promise<number> {
  const { signal, stdout, stderr } = context.io;
  const before = new Date(options.cutoff).toISOString();
  const found: Candidate[] = [];
  const dryRunInterrupted = (during = "") =>
    interrupted(
      stderr,
      "prune --dry-run",
      `after finding ${found.length} session(s) with no event since ${before}${during}${options.json ? " (--json prints them once all are found: nothing printed)" : ""}; nothing was deleted (dry run)`,
    );
  for await (const page of candidatePages(store, options.cutoff)) {
    // Between pages too: a page may hold no session old enough.
    if (await stopBeforeNextPage(signal)) return await dryRunInterrupted();
    for (const candidate of page) {
      // A query per session (its open runs), on SQLite as synchronous as the page's read.
      if (await stopBeforeNextPage(signal)) return await dryRunInterrupted();
      candidate.openRuns = await openRuns(store, candidate.sessionId);
      found.push(candidate);
      if (!options.json)
        await writeOut(
          stdout,
          `${terminalLine(`would delete ${candidate.sessionId}  ${candidate.eventCount} events, last at ${candidate.updatedAt}${candidate.openRuns.length > 0 ? `; ${candidate.openRuns.length} run(s) open: ${options.cancelReason === undefined ? "skipped without --cancel-open" : "cancelled first"}` : ""}`)}\n`,
        );
    }
  }
  // The sessions a prune would delete: one with a run open is skipped unless cancelled first.
  const deleted = found.filter(
    (candidate) => options.cancelReason !== undefined || candidate.openRuns?.length === 0,
  );
  const counted = await store.collectBlobs({
    ...options.blobGrace,
    dryRun: true,
    asIfDeleted: deleted.map((candidate) => candidate.sessionId),
    ...(signal ? { signal } : {}),
  });
  if (counted.stopped)
    return await dryRunInterrupted(", while counting the blobs that would go with them");
  const wouldDelete = counted.wouldDelete ?? { blobs: 0, bytes: 0 };
  await writeOut(
    stdout,
    options.json
      ? `${terminalJson(JSON.stringify({ dryRun: true, before, sessions: found, wouldDelete }, null, 2))}\n`
      : `${[
          `${found.length} session(s) with no event since ${before}`,
          `with them ${wouldDelete.blobs} blob(s), ${formatBytes(wouldDelete.bytes)} stored, that no session left would reference (kept: those put within the last ${graceText(options.blobGrace)}); nothing was deleted (dry run)`,
        ]
          .map(terminalLine)
          .join("\n")}\n`,
  );
  return EXIT_CODES.ok;
}
