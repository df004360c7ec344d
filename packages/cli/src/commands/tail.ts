import { BlobCache, LedgerError, type LedgerEvent, resolveEvents } from "@agent-ledger/core";
import { usageError } from "../errors.js";
import { preview, terminalJson, terminalLine } from "../format.js";
import { interrupted, LineWriter, sleep, warnMissingBlob } from "../io.js";
import { assertNotDeletedWhileRead, assertSessionExists, sessionHasEvents } from "../store.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { idArgument, MAX_TIMER_MS, numberOption } from "./session-args.js";

export const tailHelp = `agent-ledger tail <session> [--follow] [--json] [--raw] [--from <cursor>] [--interval <ms>] [--page-size <n>]
  Prints the session's events in commit order, paging by commit cursor (never misses or
  repeats an event). --from <cursor> starts after that cursor (exclusive). --follow keeps
  polling for new events, every --interval ms (default 500, at least 10), until interrupted
  (Ctrl-C or SIGTERM: exit 130, saying after which cursor, which --from takes to go on); a
  store server that stops answering for a while is said on stderr and asked again each interval. Content kept
  in the blob store is put back in place unless --raw. --follow on a session with no events yet
  waits for its first (said on stderr); without --follow it exits 3. A session deleted while
  tail reads or follows it (prune in another process) ends it with exit 3.`;

/** One human-readable line per event. */
export function eventLine(event: LedgerEvent): string {
  const payload = (
    typeof event.payload === "object" && event.payload !== null ? event.payload : {}
  ) as Record<string, unknown>;
  const detail: string[] = [];
  if (typeof payload.name === "string") detail.push(payload.name);
  if (typeof payload.toolCallId === "string") detail.push(`[${payload.toolCallId}]`);
  if (event.attemptId) detail.push(`attempt ${event.attemptId}`);
  if (event.type === "input.received") detail.push(preview(payload.input, 60));
  if (typeof payload.reason === "string") detail.push(`"${preview(payload.reason, 60)}"`);
  if (payload.error && typeof payload.error === "object")
    detail.push(`"${preview((payload.error as { message?: unknown }).message, 60)}"`);
  return `#${event.commitCursor}  ${event.recordedAt}  ${event.runId}:${event.seq}  ${event.type}${detail.length ? `  ${detail.join("  ")}` : ""}`;
}

export async function tailCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs(
    "tail",
    {
      args: context.args,
      options: {
        follow: { type: "boolean", short: "f" },
        json: { type: "boolean" },
        raw: { type: "boolean" },
        from: { type: "string" },
        interval: { type: "string" },
        "page-size": { type: "string" },
      },
      allowPositionals: true,
    },
    { takesIds: true },
  );
  const sessionId = positionals[0];
  if (!sessionId || positionals.length > 1)
    throw usageError("usage: agent-ledger tail <session> [--follow]");
  idArgument(sessionId, "<session>");
  let after = numberOption("from", values.from, 0, 0);
  const interval = numberOption("interval", values.interval, 500, 10, MAX_TIMER_MS);
  const pageSize = numberOption("page-size", values["page-size"], 500, 1);
  const store = await context.openStore();
  // --follow started before the agent wrote (a worker about to start, a session named ahead):
  // waits for its first events, as `serve --session` does, saying so once.
  let waiting = false;
  if (values.follow && !(await sessionHasEvents(store, sessionId))) {
    waiting = true;
    context.io.stderr.write(
      `agent-ledger: warning: no session ${JSON.stringify(sessionId)} in the store (yet): waiting for its first events, asking every ${interval} ms\n`,
    );
  } else await assertSessionExists(store, sessionId, context);
  const signal = context.io.signal;
  const cache = new BlobCache();
  const warned = new Set<string>();
  const lines = new LineWriter(context.io.stdout);
  /** One read of the session: its next events printed, and whether it is read to its end. */
  const poll = async (): Promise<"more" | "at-end"> => {
    const page = await store.readSession({ sessionId, after, limit: pageSize });
    const events = values.raw
      ? page.events
      : await resolveEvents(store, page.events, { cache, missingBlobs: "keep" });
    for (const ref of cache.missing) {
      if (warned.has(ref)) continue;
      warned.add(ref);
      warnMissingBlob(context.io.stderr, ref);
    }
    for (const event of events) {
      // Cursors are gap-free and commit-ordered: anything at or below `after` was printed.
      if (event.commitCursor <= after) continue;
      after = event.commitCursor;
      await lines.line(
        values.json ? terminalJson(JSON.stringify(event)) : terminalLine(eventLine(event)),
      );
    }
    await lines.flush();
    if (page.events.length > 0) waiting = false;
    if (page.events.length === pageSize) return "more";
    if (waiting) return "at-end";
    // Deleted meanwhile (prune in another process): what was printed may stop part way,
    // and --follow would wait for events that never come.
    await assertNotDeletedWhileRead(
      store,
      sessionId,
      "tail",
      "the events printed may stop short of its end",
    );
    return "at-end";
  };
  // --follow outlasts a server that stops answering for a while (a restart, a failover), as
  // the viewer does: it says so once, and reads on from its cursor when the server is back.
  let away = false;
  while (!signal?.aborted) {
    let read: "more" | "at-end";
    try {
      read = await poll();
    } catch (error) {
      if (!values.follow || !LedgerError.isInstance(error, "store-unavailable")) throw error;
      if (!away)
        context.io.stderr.write(
          `agent-ledger: warning: ${(error as Error).message}; still following, asking again every ${interval} ms\n`,
        );
      away = true;
      await sleep(interval, signal);
      continue;
    }
    if (away) context.io.stderr.write("agent-ledger: the store answers again\n");
    away = false;
    if (read === "more") continue;
    if (!values.follow) return 0;
    await sleep(interval, signal);
  }
  // Stopped by Ctrl-C or SIGTERM, following or between pages: 130, as every command stopped
  // so ends (a script tells a stopped tail from one that read the session to its end).
  return interrupted(context.io.stderr, "tail", `after cursor ${after}`);
}
