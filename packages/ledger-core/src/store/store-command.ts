import type { EventStore } from "./event-store.js";
import { shellQuote } from "./shell-quote.js";

// The `agent-ledger` commands an adapter's messages print are run in another shell, where the
// CLI opens `--store`, else $AGENT_LEDGER_STORE, else ./agent-ledger.db: a command that does not
// name the store the run recorded to finds, in any other, "session not found".

/**
 * The URL `agent-ledger --store` opens `store` with, as the store describes itself (a password
 * already `***`), or undefined where no URL names it: a store on the application's own pool
 * (`postgres (application pool)`), a database in memory, a store without `describe()`. A store
 * on the application's own Redis client describes it by host, port, database and key prefix:
 * the right server, without the password the client may hold.
 */
function storeUrl(store: EventStore | undefined): string | undefined {
  let described: ReturnType<EventStore["describe"]>;
  try {
    if (typeof store?.describe !== "function") return undefined;
    described = store.describe();
  } catch {
    return undefined;
  }
  const { kind, location } = described ?? {};
  if (typeof location !== "string" || location === "") return undefined;
  // SQLite's location is the file's path; ":memory:" is this process's alone.
  if (kind === "sqlite") return location === ":memory:" ? undefined : `sqlite:${location}`;
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location) ? location : undefined;
}

/**
 * `agent-ledger <command>` as a person pastes it into a shell, between backquotes: the store's
 * `--store <url>` where the store names one, then `ids` quoted after `--` (an id may start with
 * "-"). Then what the person adds: the password the URL shows as `***`, or, where the store
 * names no URL (or the caller has no store at hand: undefined), the store's URL unless
 * $AGENT_LEDGER_STORE names it.
 */
export function ledgerCommand(
  store: EventStore | undefined,
  command: string,
  ids: readonly string[],
): string {
  const url = storeUrl(store);
  const option = url === undefined ? "" : ` --store ${shellQuote(url)}`;
  const text = `\`agent-ledger ${command}${option} -- ${ids.map(shellQuote).join(" ")}\``;
  if (url === undefined)
    return `${text} (with --store <your store's URL> unless $AGENT_LEDGER_STORE names it)`;
  return url.includes("***") ? `${text} (with the store's password in place of ***)` : text;
}
