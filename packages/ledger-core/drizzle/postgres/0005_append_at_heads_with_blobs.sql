-- The group commit's function (0002), for appends that name blobs or carry them too. A recorded
-- call that brings a new message does both, so with 0002 alone every such call went in a
-- statement of its own and waited at the session's row behind the batches of the session's
-- other runs. Takes 0002's arguments, then the refs each append names (with the append's place
-- in the arrays, from 1) and the blobs each carries (ref, content, place). It runs 0002's
-- function, which locks the runs rows, then the session's row, and writes the events of the
-- appends whose heads still are the expected ones; then, for those appends only, it stores the
-- blobs and then the session's claims, each once, in ref order across the whole call (the
-- order in which every writer takes blob rows), as the one-statement append and the
-- transactional path do. Returns what 0002's function returns.
CREATE FUNCTION agent_ledger_append_blobs_at_heads(
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
    INSERT INTO blobs (blob_ref, content, touched_at)
    SELECT DISTINCT ON (x.ref) x.ref, x.content,
      (extract(epoch from clock_timestamp()) * 1000)::bigint
    FROM unnest(p_blob_ref, p_blob_content, p_blob_owner) AS x(ref, content, owner)
    WHERE x.owner = ANY (written)
    ORDER BY x.ref
    ON CONFLICT (blob_ref) DO UPDATE SET touched_at = excluded.touched_at;
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
