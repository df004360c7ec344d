import { DEFAULT_BLOB_GRACE_MS } from "@agent-ledger/core";
import { EXIT_CODES, usageError } from "../errors.js";
import { formatBytes, terminalJson, terminalLine } from "../format.js";
import { interrupted, writeOut } from "../io.js";
import { commandArgs } from "./command-args.js";
import type { CommandContext } from "./context.js";
import { BLOB_GRACE_FORMS, blobGraceOption, formatDuration, graceText } from "./session-args.js";

const USAGE = "agent-ledger collect-blobs [--blob-grace <duration>] [--dry-run] [--json]";

export const collectBlobsHelp = `${USAGE}
  Deletes every blob that no existing session references, across the whole store: what
  deleting a session cannot see (a blob put with no session and never named, or put for a
  session while it was being deleted). Safe while agents write: a blob put within the grace,
  on the database's clock, is kept (default ${formatDuration(DEFAULT_BLOB_GRACE_MS)}; ${BLOB_GRACE_FORMS}).
  --dry-run deletes nothing: it says how many blobs a pass would delete now, and the bytes the
  store keeps for them (--json: "wouldDelete": { "blobs", "bytes" }). Agents write meanwhile,
  so the pass after it may find a few more (puts whose grace ran out) or fewer.
  --json prints the count as JSON. Ctrl-C stops it between pages (exit 130), saying how many
  blobs it deleted (or, with --dry-run, counted) until then (--json: with "stopped": true); the
  others are kept.`;

export async function collectBlobsCommand(context: CommandContext): Promise<number> {
  const { values, positionals } = commandArgs("collect-blobs", {
    args: context.args,
    options: {
      "blob-grace": { type: "string" },
      "dry-run": { type: "boolean" },
      json: { type: "boolean" },
    },
    allowPositionals: true,
  });
  if (positionals.length > 0) throw usageError(`usage: ${USAGE}`);
  const blobGrace = blobGraceOption(values["blob-grace"]);
  const dryRun = values["dry-run"] === true;
  const store = await context.openStore();
  const { signal, stdout, stderr } = context.io;
  // Stopped at Ctrl-C between pages, each its own transaction: the count is what is gone.
  const result = await store.collectBlobs({ ...blobGrace, dryRun, ...(signal ? { signal } : {}) });
  const grace = graceText(blobGrace);
  if (values.json) await writeOut(stdout, `${terminalJson(JSON.stringify(result, null, 2))}\n`);
  const counted = result.wouldDelete;
  if (counted !== undefined) {
    const found = `${counted.blobs} blob(s), ${formatBytes(counted.bytes)} stored,`;
    if (result.stopped)
      return await interrupted(
        stderr,
        "collect-blobs --dry-run",
        `after counting ${found} in the pages it looked at; nothing was deleted`,
      );
    if (!values.json)
      await writeOut(
        stdout,
        `${terminalLine(`would delete ${found} that no existing session references (kept: those put within the last ${grace}); nothing was deleted`)}\n`,
      );
    return EXIT_CODES.ok;
  }
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
