import type { BlobPage, WriteStep } from "../sql/write-program.js";
import { refDigest } from "./ref-digest.js";
import type { Statements } from "./write-statements.js";

/**
 * A page of collectBlobs, inside the IMMEDIATE transaction: it holds the database's write
 * lock, so no put or append runs between finding the page, deleting its blobs (touched_at
 * and the references as committed) and deleting their index rows, and the page's few
 * hundred index lookups are all a writer waits for. The page's bounds are its first
 * `limit` keys; the delete finds its blobs between them with the primary key. A dry run counts
 * the same blobs (and their stored bytes) with the delete's own condition, less the claims of
 * the sessions it counts as deleted.
 */
export function collectBlobPage(
  step: Extract<WriteStep, { kind: "collect-blobs" }>,
  statements: Statements,
): BlobPage {
  const after = step.after === undefined ? Buffer.alloc(0) : refDigest(step.after);
  const page = statements.blobPage.get(after, step.limit) as {
    examined: number;
    last: Buffer | null;
  };
  if (page.last === null) return { examined: 0, last: undefined, deleted: 0, bytes: 0 };
  const last = `sha256:${page.last.toString("hex")}`;
  if (step.dryRun) {
    const count = statements.countCollectable.get(
      after,
      page.last,
      step.graceMs,
      JSON.stringify(step.asIfDeleted),
    ) as {
      blobs: number;
      bytes: number;
    };
    return { examined: page.examined, last, deleted: count.blobs, bytes: count.bytes };
  }
  const deleted = statements.collectBlobs.all(after, page.last, step.graceMs) as Buffer[];
  // No existing session references these: their index rows are of sessions that are gone.
  for (const digest of deleted) statements.deleteBlobRefs.run(digest);
  return { examined: page.examined, last, deleted: deleted.length, bytes: 0 };
}
