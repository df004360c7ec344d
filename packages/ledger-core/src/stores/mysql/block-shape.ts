import type { HeadAppend } from "../sql/head-cache.js";

/** Puts of at most this many blobs keep their block prepared (see putBlock, put-blobs.ts). */
export const FEW_BLOBS = 4;

/**
 * The batch shapes worth keeping prepared on a connection: one append of a few events (every
 * recorded call), or a few appends of one event each, of one session (its parallel writers) or
 * of as many sessions (a store's writers on their own sessions). Other shapes (sizes or
 * sessions mixed) are rare and many, so they are closed after use.
 */
export function isCommonShape(appends: HeadAppend[]): boolean {
  const few = 16;
  // Blobs stored with an append: a recorded call carries one to three (a message, its list).
  // In a block of several, the shape follows which appends carry blobs and how their refs
  // interleave: kept only for a lone append.
  const blobs = appends.reduce((count, append) => count + append.blobs.length, 0);
  if (blobs > 0 && (appends.length > 1 || blobs > FEW_BLOBS)) return false;
  if (appends.length === 1) return (appends[0]?.events.length ?? 0) <= few;
  if (appends.length > few || appends.some((append) => append.events.length !== 1)) return false;
  // Appends that name blobs have a shape of their own: kept when all or none of them do.
  const naming = appends.filter((append) => append.refs.length > 0).length;
  if (naming !== 0 && naming !== appends.length) return false;
  const sessions = new Set(appends.map((append) => append.sessionId)).size;
  return sessions === 1 || sessions === appends.length;
}
