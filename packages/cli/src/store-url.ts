import { redactUrl } from "@agent-ledger/core";
import type { CommandContext } from "./commands/context.js";
import { shellQuote } from "./format.js";

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

/**
 * The options the text a command prints takes to name its store (`storeUrl`, as
 * `commandStoreUrl` gives it): none where `$AGENT_LEDGER_STORE` supplied it. `inspect`, `export`
 * and `serve` all pass these, so their warnings and commands name the store alike.
 */
export function commandStoreOptions(context: Pick<CommandContext, "storeUrl" | "storeSource">): {
  storeUrl?: string;
} {
  const storeUrl = commandStoreUrl(context);
  return storeUrl === undefined ? {} : { storeUrl };
}

/**
 * What a printed command adds to name the store of `storeUrl` (a `commandStoreUrl` answer):
 * ` --store <url>` quoted for a shell with its password as `***`, or "" where the environment
 * supplies the store; and whether the password was left out (the person puts it back).
 */
export function storeOption(storeUrl: string | undefined): {
  option: string;
  passwordLeftOut: boolean;
} {
  if (!storeUrl) return { option: "", passwordLeftOut: false };
  const shown = redactUrl(storeUrl);
  return { option: ` --store ${shellQuote(shown)}`, passwordLeftOut: shown !== storeUrl };
}

/**
 * The command a hint names, to be pasted into a shell: `agent-ledger <command>`, then the
 * store the command was given, then `ids` quoted after `--` (an id may start with "-", and
 * shell quotes do not stop the parser from reading it as an option).
 */
export function hintCommand(
  context: Pick<CommandContext, "storeUrl" | "storeSource">,
  command: string,
  ids: string[] = [],
): string {
  const { option, passwordLeftOut } = storeOption(commandStoreUrl(context));
  const tail = ids.length === 0 ? "" : ` -- ${ids.map(shellQuote).join(" ")}`;
  return `agent-ledger ${command}${option}${tail}${passwordLeftOut ? " (put the password back in place of ***)" : ""}`;
}
