import type { EventStore, SessionSummary } from "@agent-ledger/core";
import { stopBeforeNextPage } from "@agent-ledger/core";
import { terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import { openWorkText, type SessionWithOpenWork, sessionsWithOpenWork } from "../open-work.js";
import { ReadsStopped, sessionPages, stoppingReads } from "../store.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { numberOption } from "./session-args.js";

export const sessionsHelp = `agent-ledger sessions [--json] [--limit <n>] [--unresolved]
  List the sessions in the store: id, events, first and last event time, printed a page at a
  time as they are read (--json: once all are read). Ctrl-C stops it between pages (exit 130);
  what was printed stays printed.
  --unresolved: only the sessions with something open, as \`inspect\` counts it: unresolved
  attempts (calls in flight: at work, or left so by a crash or by their caller stopping them),
  runs paused at an approval, runs open with nothing in flight; the counts in a last column
  (--json: \`unresolved\`, \`paused\`, \`openRuns\`). The question after a crash: which sessions
  had calls in flight? It reads every session whole, as inspect does: on a large ledger, as long
  as inspecting each. --limit counts the sessions it lists.`;

/** A page of rows to print: every session, or (--unresolved) those with something open. */
type Row = SessionSummary | SessionWithOpenWork;

export async function sessionsCommand(context: CommandContext): Promise<number> {
  const { values } = commandArgs("sessions", {
    args: context.args,
    options: {
      json: { type: "boolean" },
      limit: { type: "string" },
      unresolved: { type: "boolean" },
    },
  });
  const limit = numberOption("limit", values.limit, Number.POSITIVE_INFINITY, 1);
  const store = await context.openStore();
  const { signal, stdout, stderr } = context.io;
  const unresolved = values.unresolved === true;
  // --unresolved: each session's read stops at Ctrl-C before its next page (stoppingReads), the
  // first page of the next session too.
  const pages = unresolved ? pagesWithOpenWork(stoppingReads(store, signal)) : sessionPages(store);
  const stop = (when: string) => interrupted(stderr, "sessions", when);
  // What a Ctrl-C says was done when it stops the command (--unresolved: also part way through
  // a page, between two sessions or inside one's read).
  let done = "";
  try {
    if (values.json) {
      const sessions: Row[] = [];
      const read = () =>
        `after ${unresolved ? "finding" : "reading"} ${sessions.length} session(s)${unresolved ? " with something open" : ""}; nothing printed (--json prints the list once all are read)`;
      done = read();
      for await (const page of pages) {
        sessions.push(...page);
        done = read();
        // A turn of the event loop between pages, for Ctrl-C to be seen (io.ts).
        if (await stopBeforeNextPage(signal)) return await stop(done);
        if (sessions.length >= limit) break;
      }
      await writeOut(
        stdout,
        `${terminalJson(JSON.stringify(sessions.slice(0, limit), null, 2))}\n`,
      );
      return 0;
    }
    // Printed a page at a time: on a ledger of 100,000s of sessions the first rows come at once,
    // and a Ctrl-C leaves what was printed. The id column is as wide as the first page's widest
    // id, so a longer id on a later page pushes its own row only.
    let shown = 0;
    let width = 7;
    done = "after listing 0 session(s)";
    const row = (id: string, events: string, created: string, updated: string, open?: string) =>
      `${id.padEnd(width)}  ${events.padStart(6)}  ${created.padEnd(24)}  ${open === undefined ? updated : `${updated.padEnd(24)}  ${open}`}`;
    for await (const page of pages) {
      if (await stopBeforeNextPage(signal)) return await stop(done);
      const rows = page.slice(0, limit - shown);
      // --unresolved: a page of the store's list may hold no session to list.
      if (rows.length === 0) continue;
      const lines: string[] = [];
      if (shown === 0) {
        // A loop, not Math.max(...): one argument per session overflowed the stack at ~150,000.
        for (const session of rows) width = Math.max(width, session.sessionId.length);
        lines.push(row("SESSION", "EVENTS", "CREATED", "UPDATED", unresolved ? "OPEN" : undefined));
      }
      for (const session of rows)
        lines.push(
          row(
            session.sessionId,
            String(session.eventCount),
            session.createdAt,
            session.updatedAt,
            unresolved ? openWorkText(session as SessionWithOpenWork) : undefined,
          ),
        );
      await writeOut(stdout, `${lines.map(terminalLine).join("\n")}\n`);
      shown += rows.length;
      done = `after listing ${shown} session(s)`;
      if (shown >= limit) break;
    }
    if (shown === 0)
      await writeOut(
        stdout,
        unresolved
          ? "no session has an unresolved attempt, a paused run or a run open\n"
          : "no sessions\n",
      );
    else if (unresolved)
      await writeOut(stdout, "agent-ledger inspect <session> says what to do about each\n");
    return 0;
  } catch (error) {
    if (error instanceof ReadsStopped) return await stop(done);
    throw error;
  }
}

/**
 * The sessions with something open, a page of the store's list at a time (a page may come out
 * empty): each read whole, as `inspect` reads it. A session deleted while read is left out.
 */
async function* pagesWithOpenWork(store: EventStore): AsyncGenerator<SessionWithOpenWork[]> {
  for await (const page of sessionPages(store)) yield await sessionsWithOpenWork(store, page);
}
