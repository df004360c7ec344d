import type { CommandContext } from "./commands/context.js";

/**
 * The store URL the commands agent-ledger prints (`resolve ... --store <url>`) name, as given
 * (core's `redactUrl` masks it where it is shown), or undefined when `$AGENT_LEDGER_STORE`
 * supplied it: the environment the command is run in supplies it again, and a masked copy in
 * the command would override a working one. `inspect` and `serve` (for the viewer's page) both
 * ask here, so the page and the terminal print the same command.
 */
export function commandStoreUrl(
  context: Pick<CommandContext, "storeUrl" | "storeSource">,
): string | undefined {
  return context.storeSource === "env" ? undefined : context.storeUrl;
}
