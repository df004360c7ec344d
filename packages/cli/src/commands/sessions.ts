import { parseArgs } from "node:util";
import type { SessionSummary } from "@agent-ledger/core";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import { sessionPages } from "../store.js";
import type { CommandContext } from "./context.js";
import { numberOption } from "./session-args.js";

export const sessionsHelp = `agent-ledger sessions [--json] [--limit <n>]
  List the sessions in the store: id, events, first and last event time.`;

export async function sessionsCommand(context: CommandContext): Promise<number> {
  const { values } = parseArgs({
    args: context.args,
    options: { json: { type: "boolean" }, limit: { type: "string" } },
    strict: true,
  });
  const limit = numberOption("limit", values.limit, Number.POSITIVE_INFINITY, 1);
  const store = await context.openStore();
  const sessions: SessionSummary[] = [];
  for await (const page of sessionPages(store)) {
    sessions.push(...page);
    if (sessions.length >= limit) break;
  }
  const shown = sessions.slice(0, limit);
  if (values.json) {
    await writeOut(context.io.stdout, `${terminalJson(JSON.stringify(shown, null, 2))}\n`);
    return 0;
  }
  if (shown.length === 0) {
    await writeOut(context.io.stdout, "no sessions\n");
    return 0;
  }
  // A loop, not Math.max(...): one argument per session overflowed the stack at ~150,000.
  let width = 7;
  for (const session of shown) width = Math.max(width, session.sessionId.length);
  const lines = [
    `${"SESSION".padEnd(width)}  ${"EVENTS".padStart(6)}  CREATED                   UPDATED`,
  ];
  for (const session of shown)
    lines.push(
      `${session.sessionId.padEnd(width)}  ${String(session.eventCount).padStart(6)}  ${session.createdAt.padEnd(24)}  ${session.updatedAt}`,
    );
  await writeOut(context.io.stdout, `${lines.map(terminalLine).join("\n")}\n`);
  return 0;
}
