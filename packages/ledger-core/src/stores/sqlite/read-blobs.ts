import type { SqliteBackendState } from "./backend-state.js";

/** `SqliteBackend.getBlobs`: the stored bytes of those of `refs` the file holds. */
export function readBlobs(state: SqliteBackendState, refs: string[]): Map<string, Uint8Array> {
  if (state.getBlobs === undefined) {
    state.getBlobs = state.database.prepare(
      `SELECT lower(hex(digest)) AS hex, content FROM blobs
         WHERE digest IN (SELECT unhex(substr(value, 8)) FROM json_each(?))`,
    );
  }
  const statement = state.getBlobs;
  const out = new Map<string, Uint8Array>();
  for (let start = 0; start < refs.length; start += 500) {
    const chunk = refs.slice(start, start + 500);
    for (const row of statement.all(JSON.stringify(chunk)) as { hex: string; content: Buffer }[])
      out.set(`sha256:${row.hex}`, row.content);
  }
  return out;
}
