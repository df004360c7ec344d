import { parseArgs } from "node:util";
import { DEFAULT_BLOB_GRACE_MS } from "@agent-ledger/core";
import { EXIT_CODES, usageError } from "../errors.js";
import { terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import type { CommandContext } from "./context.js";
import { blobGraceOption, formatDuration, graceText } from "./session-args.js";

export const collectBlobsHelp = `agent-ledger collect-blobs [--blob-grace <duration>] [--json]
  Deletes every blob that no existing session references, across the whole store: what
  deleting a session cannot see (a blob put with no session and never named, or put for a
  session while it was being deleted). Safe while agents write: a blob put within the grace,
  on the database's clock, is kept (default ${formatDuration(DEFAULT_BLOB_GRACE_MS)}; 600000, 500ms, 30s, 10m, 2h, 1d).
  --json prints the count as JSON. Ctrl-C stops it between pages (exit 130), saying how many
  blobs it deleted until then (--json: with "stopped": true); the others are kept.`;

export async function collectBlobsCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = parseArgs({
    args: context.args,
    options: { "blob-grace": { type: "string" }, json: { type: "boolean" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length > 0)
    throw usageError("usage: agent-ledger collect-blobs [--blob-grace <duration>] [--json]");
  const blobGrace = blobGraceOption(values["blob-grace"]);
  const store = await context.openStore();
  const { signal, stdout, stderr } = context.io;
  // Stopped at Ctrl-C between pages, each its own transaction: the count is what is gone.
  const result = await store.collectBlobs(signal ? { ...blobGrace, signal } : blobGrace);
  const grace = graceText(blobGrace);
  if (values.json) await writeOut(stdout, `${terminalJson(JSON.stringify(result, null, 2))}\n`);
  if (result.stopped)
    return await interrupted(
      stderr,
      "collect-blobs",
      `after deleting ${result.deletedBlobs} blob(s) that no existing session references; the blobs it had not looked at yet are kept`,
    );
  if (!values.json)
    await writeOut(
      stdout,
      `${terminalLine(`deleted ${result.deletedBlobs} blob(s) that no existing session references (kept: those put within the last ${grace})`)}\n`,
    );
  return EXIT_CODES.ok;
}
