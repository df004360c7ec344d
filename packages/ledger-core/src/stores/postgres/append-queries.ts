import { createHash } from "node:crypto";
import type { PostgresBackendState } from "./backend-state.js";
import { storeBlobsAfterLocks } from "./blob-stamp.js";
import { quoteIdent } from "./quote-ident.js";

/** The named (prepared) statements of the one-statement append: one event, or a batch. */
export type NamedQuery = { name: string; text: string };

/** One append's statements: plain, indexing refs, or also storing blobs (see AppendQueries). */
interface AppendShapes {
  plain: NamedQuery;
  refs: NamedQuery;
  blobs: NamedQuery;
}

export interface AppendQueries {
  /**
   * One append of one event (scalar parameters) or of several (arrays); `refs` also indexes
   * the blobs the batch names (the next parameter), `blobs` also stores the blobs the append
   * carries (two more: their refs and stored bytes).
   */
  single: AppendShapes;
  batch: AppendShapes;
  /**
   * Appends to several runs of one session, gathered by the store (group commit); `runsBlobs`
   * also with the blobs they name and carry (five more arrays).
   */
  runs: NamedQuery;
  runsBlobs: NamedQuery;
}

/**
 * `h` also requires the session's counter row: were a runs row ever without it, `c` would
 * update nothing and `e` insert nothing, and `h` alone must not move the head. Then the
 * statement writes nothing and the store falls back on the transactional program.
 */
export function appendQueries(state: PostgresBackendState): AppendQueries {
  if (state.appendQueries !== undefined) return state.appendQueries;
  const schema = quoteIdent(state.schema);
  const head = `h AS (
  UPDATE ${schema}."runs" SET run_length = $3, status = $4, last_hash = $5
  WHERE session_id = $1 AND run_id = $2 AND run_length = $6
    AND last_hash IS NOT DISTINCT FROM $7::text AND status = 'running'
    AND EXISTS (SELECT 1 FROM ${schema}."sessions" s WHERE s.session_id = $1)
  RETURNING 1
)`;
  const cursor = (count: string) => `c AS (
  UPDATE ${schema}."sessions" SET last_cursor = last_cursor + ${count}, updated_at = $8
  WHERE session_id = $1 AND EXISTS (SELECT 1 FROM h)
  RETURNING last_cursor
)`;
  const columns =
    "(session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)";
  const single = `WITH ${head}, ${cursor("1")}, e AS (
  INSERT INTO ${schema}."events" ${columns}
  SELECT $1, c.last_cursor, $2, $9::int, $10::text, $11::text, $12::text,
    $13::text || c.last_cursor::text || '}'
  FROM c
)
`;
  const batch = `WITH ${head}, ${cursor("$9::bigint")}, e AS (
  INSERT INTO ${schema}."events" ${columns}
  SELECT $1, c.last_cursor - $9::bigint + u.ord, $2, u.seq, u.event_id, u.event_type,
    u.recorded_at, u.prefix || (c.last_cursor - $9::bigint + u.ord)::text || '}'
  FROM c, unnest($10::int[], $11::text[], $12::text[], $13::text[], $14::text[])
    WITH ORDINALITY AS u(seq, event_id, event_type, recorded_at, prefix, ord)
)`;
  // The blobs' index rows, written only when `c` moved the counter, after the counter row
  // (the transactional path's order); refs sorted, so two writers insert them in one order.
  const indexRefs = (parameter: string) => `, r AS (
  INSERT INTO ${schema}."blob_refs" (blob_ref, session_id)
  SELECT x.ref, $1 FROM c, unnest(${parameter}::text[]) AS x(ref)
  ON CONFLICT DO NOTHING
)`;
  // The blobs the append carries, stored only when `c` moved the counter (after the
  // counter row, as deleteSession locks it before the blobs it collects), then claimed by
  // `r` in the same commit.
  // Stamped once their rows are locked (storeBlobsAfterLocks).
  const storeBlobs = (refs: string, contents: string) =>
    `, ${storeBlobsAfterLocks(
      `${schema}."blobs"`,
      `c, unnest(${refs}::text[], ${contents}::bytea[]) AS x(ref, content)`,
    )}`;
  const last = "\nSELECT last_cursor FROM c";
  const named = (text: string) => ({
    name: `agent_ledger_append_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`,
    text,
  });
  const runArguments = `$1::text, $2::text[], $3::int[], $4::text[], $5::text[], $6::int[],
  $7::text[], $8::int[], $9::text, $10::int[], $11::text[], $12::text[], $13::text[], $14::text[]`;
  const runs = `SELECT ord, last_cursor FROM ${schema}.agent_ledger_append_at_heads(
  ${runArguments})`;
  const runsBlobs = `SELECT ord, last_cursor FROM ${schema}.agent_ledger_append_blobs_at_heads(
  ${runArguments}, $15::text[], $16::int[], $17::text[], $18::bytea[], $19::int[])`;
  state.appendQueries = {
    single: {
      plain: named(single + last),
      refs: named(single + indexRefs("$14") + last),
      blobs: named(single + storeBlobs("$15", "$16") + indexRefs("$14") + last),
    },
    batch: {
      plain: named(batch + last),
      refs: named(batch + indexRefs("$15") + last),
      blobs: named(batch + storeBlobs("$16", "$17") + indexRefs("$15") + last),
    },
    runs: named(runs),
    runsBlobs: named(runsBlobs),
  };
  return state.appendQueries;
}
