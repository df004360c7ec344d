-- 0005's function again, its blobs stamped once their rows are locked. It stamped them with
-- the clock read as its INSERT began, before it waited for a row another transaction held
-- (a collection, another writer): a wait past the retention grace left a stamp already past
-- it, and the next collection deleted a blob put moments before. Now the function first locks
-- the rows of the blobs it stores that exist, in ref order (the order every writer and
-- collection takes them), then reads the clock for the rows it inserts, and a row it updates
-- takes the clock read after that row's lock (ON CONFLICT's SET runs with the row locked). A
-- row deleted while it waited is inserted again, with the clock read after the wait. Same
-- arguments and result: processes of the previous release call it unchanged.
CREATE OR REPLACE FUNCTION agent_ledger_append_blobs_at_heads(
  p_session text, p_run text[], p_length integer[], p_status text[], p_last_hash text[],
  p_expected_length integer[], p_expected_hash text[], p_count integer[], p_now text,
  p_seq integer[], p_event_id text[], p_event_type text[], p_recorded_at text[],
  p_body_prefix text[], p_ref text[], p_ref_owner integer[], p_blob_ref text[],
  p_blob_content bytea[], p_blob_owner integer[]
) RETURNS TABLE (ord integer, last_cursor bigint)
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  written integer[] := '{}';
BEGIN
  FOR ord, last_cursor IN
    SELECT w.ord, w.last_cursor FROM agent_ledger_append_at_heads(p_session, p_run, p_length,
      p_status, p_last_hash, p_expected_length, p_expected_hash, p_count, p_now, p_seq,
      p_event_id, p_event_type, p_recorded_at, p_body_prefix) AS w
  LOOP
    written := written || ord;
    RETURN NEXT;
  END LOOP;
  IF cardinality(written) = 0 THEN RETURN; END IF;
  IF cardinality(p_blob_ref) > 0 THEN
    PERFORM 1 FROM blobs
    WHERE blob_ref IN (
      SELECT x.ref FROM unnest(p_blob_ref, p_blob_owner) AS x(ref, owner)
      WHERE x.owner = ANY (written)
    )
    ORDER BY blob_ref
    FOR UPDATE;
    INSERT INTO blobs (blob_ref, content, touched_at)
    SELECT DISTINCT ON (x.ref) x.ref, x.content,
      (extract(epoch from clock_timestamp()) * 1000)::bigint
    FROM unnest(p_blob_ref, p_blob_content, p_blob_owner) AS x(ref, content, owner)
    WHERE x.owner = ANY (written)
    ORDER BY x.ref
    ON CONFLICT (blob_ref) DO UPDATE
    SET touched_at = (extract(epoch from clock_timestamp()) * 1000)::bigint;
  END IF;
  IF cardinality(p_ref) > 0 THEN
    INSERT INTO blob_refs (blob_ref, session_id)
    SELECT DISTINCT x.ref, p_session
    FROM unnest(p_ref, p_ref_owner) AS x(ref, owner)
    WHERE x.owner = ANY (written)
    ORDER BY x.ref
    ON CONFLICT DO NOTHING;
  END IF;
END;
$$;
