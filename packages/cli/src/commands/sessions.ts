import type { SessionSummary } from "@agent-ledger/core";
import { stopBeforeNextPage } from "@agent-ledger/core";
import { terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import { sessionPages } from "../store.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { numberOption } from "./session-args.js";

export const sessionsHelp = `agent-ledger sessions [--json] [--limit <n>]
  List the sessions in the store: id, events, first and last event time, printed a page at a
  time as they are read (--json: once all are read). Ctrl-C stops it between pages (exit 130);
  what was printed stays printed.`;

export async function sessionsCommand(context: CommandContext): Promise<number> {
  const { values } = commandArgs("sessions", {
    args: context.args,
    options: { json: { type: "boolean" }, limit: { type: "string" } },
  });
  const limit = numberOption("limit", values.limit, Number.POSITIVE_INFINITY, 1);
  const store = await context.openStore();
  const { signal, stdout, stderr } = context.io;
  if (values.json) {
    const sessions: SessionSummary[] = [];
    for await (const page of sessionPages(store)) {
      // A turn of the event loop between pages, for Ctrl-C to be seen (io.ts).
      if (await stopBeforeNextPage(signal))
        return interrupted(
          stderr,
          "sessions",
          `after reading ${sessions.length} session(s); nothing printed (--json prints the list once all are read)`,
        );
      sessions.push(...page);
      if (sessions.length >= limit) break;
    }
    await writeOut(stdout, `${terminalJson(JSON.stringify(sessions.slice(0, limit), null, 2))}\n`);
    return 0;
  }
  // Printed a page at a time: on a ledger of 100,000s of sessions the first rows come at once,
  // and a Ctrl-C leaves what was printed. The id column is as wide as the first page's widest
  // id, so a longer id on a later page pushes its own row only.
  let shown = 0;
  let width = 7;
  for await (const page of sessionPages(store)) {
    if (await stopBeforeNextPage(signal))
      return interrupted(stderr, "sessions", `after listing ${shown} session(s)`);
    const rows = page.slice(0, limit - shown);
    const lines: string[] = [];
    if (shown === 0) {
      // A loop, not Math.max(...): one argument per session overflowed the stack at ~150,000.
      for (const session of rows) width = Math.max(width, session.sessionId.length);
      lines.push(
        `${"SESSION".padEnd(width)}  ${"EVENTS".padStart(6)}  CREATED                   UPDATED`,
      );
    }
    for (const session of rows)
      lines.push(
        `${session.sessionId.padEnd(width)}  ${String(session.eventCount).padStart(6)}  ${session.createdAt.padEnd(24)}  ${session.updatedAt}`,
      );
    await writeOut(stdout, `${lines.map(terminalLine).join("\n")}\n`);
    shown += rows.length;
    if (shown >= limit) break;
  }
  if (shown === 0) await writeOut(stdout, "no sessions\n");
  return 0;
}
