import { bufferOf } from "../../store/blob.js";
import type { HeadAppend } from "../sql/head-cache.js";
import type { BlobRow } from "../sql/sql-backend.js";
import { blobsStatement, claimsStatement } from "./block-statements.js";

/**
 * The part of an append block that stores the blobs its appends carry, binding their values:
 * after every runs row and counter row (deleteSession locks a session's counter row before
 * the blobs it collects), each blob once, in ref order across the whole block (two blocks
 * carrying the same blobs lock them in one order), and only if an append that carries it
 * was written (its `m` flag). Then those appends' claims, as SqlBackend.putBlobs orders
 * them: blob first, so a collectBlobs page that holds the blob's row makes the claim wait.
 */
export function carriedBlobs(
  prefix: string,
  order: { append: HeadAppend }[],
  values: (string | number | Buffer | null)[],
): string {
  const carriers = new Map<string, { blob: BlobRow; flags: string[] }>();
  order.forEach(({ append }, i) => {
    for (const blob of append.blobs) {
      const entry = carriers.get(blob.ref) ?? { blob, flags: [] };
      entry.flags.push(`m${i} = 1`);
      carriers.set(blob.ref, entry);
    }
  });
  if (carriers.size === 0) return "";
  // Neighbours in ref order stored under one condition share an INSERT: one for all the
  // blobs of a lone append (a recorded call), however many it carries.
  const groups: { condition: string; blobs: BlobRow[] }[] = [];
  for (const ref of [...carriers.keys()].sort()) {
    const { blob, flags } = carriers.get(ref) as { blob: BlobRow; flags: string[] };
    const condition = flags.join(" OR ");
    const last = groups[groups.length - 1];
    if (last?.condition === condition) last.blobs.push(blob);
    else groups.push({ condition, blobs: [blob] });
  }
  const parts: string[] = [];
  for (const { condition, blobs } of groups) {
    values.push(JSON.stringify(blobs.map((blob) => blob.ref)));
    for (const blob of blobs) values.push(blob.ref, bufferOf(blob.stored));
    parts.push(`IF ${condition} THEN
    ${blobsStatement(prefix, blobs.length)}
  END IF;`);
  }
  order.forEach(({ append }, i) => {
    if (append.blobs.length === 0) return;
    values.push(append.sessionId, JSON.stringify(append.refs));
    parts.push(`IF m${i} = 1 THEN
    ${claimsStatement(prefix)}
  END IF;`);
  });
  return `\n  ${parts.join("\n  ")}`;
}
