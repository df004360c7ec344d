import type { EventStore } from "@agent-ledger/core";
import { EXIT_CODES, usageError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { writeOut } from "../io.js";
import { olderLedgerVersions } from "../store.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";

export const upgradeHelp = `agent-ledger upgrade [--json]
  Upgrades a ledger an older release made to the schema this release reads (on Redis, its key
  layout): the one command that changes it, every other refuses such a ledger (exit 1). Run it
  once no agent of an older release writes to the ledger: those agents may break, or write
  what retention cannot see. Makes no ledger where there is none (exit 3). On a large ledger
  it may take minutes; the store URL's user must be one that may create and alter its tables.
  --json prints what it found and did as JSON.`;

export async function upgradeCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs("upgrade", {
    args: context.args,
    options: { json: { type: "boolean" } },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw usageError("usage: agent-ledger upgrade [--json]");
  // Opened as every command opens it first: a current ledger is left alone, and an older one
  // says which version it is at. Only then is it opened to upgrade (the versions are the
  // refusal's: a store says them nowhere else).
  let store: EventStore;
  let versions: { found: number; reads: number } | undefined;
  try {
    store = await context.openStore();
  } catch (error) {
    versions = olderLedgerVersions(error);
    if (versions === undefined) throw error;
    store = await context.openStore({ upgrade: true });
  }
  const { kind, location = context.storeUrl } = store.describe();
  const what = kind === "redis" ? "key layout" : "schema";
  const report =
    versions === undefined
      ? { location, kind, upgraded: false }
      : { location, kind, upgraded: true, from: versions.found, to: versions.reads };
  await writeOut(
    context.io.stdout,
    values.json
      ? `${terminalJson(JSON.stringify(report, null, 2))}\n`
      : `${terminalLine(
          versions === undefined
            ? `the ledger at ${location} is already at the ${what} version this release reads: nothing to upgrade`
            : `upgraded the ledger at ${location} from ${what} version ${versions.found} to ${versions.reads}`,
        )}\n`,
  );
  return EXIT_CODES.ok;
}
