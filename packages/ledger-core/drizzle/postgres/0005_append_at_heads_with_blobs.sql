-- The group commit's function (0002), for appends that name blobs or carry them too. A recorded
-- call that brings a new message does both, so with 0002 alone every such call went in a
-- statement of its own and waited at the session's row behind the batches of the session's
-- other runs. Takes 0002's arguments, then the refs each append names (with the append's place
-- in the arrays) and the blobs each carries (ref, content, place). Blobs and their index rows
-- are written only for the appends written, after the session's row and the events, in ref
-- order across the whole call (the order in which every writer takes blob rows), each once:
-- the blobs first, then the session's claims, as the one-statement append and the
-- transactional path do. The 0002 function stays for processes of the previous release that
-- still run against an upgraded schema.
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
  n integer := cardinality(p_run);
  moved boolean[] := array_fill(false, ARRAY[n]);
  total bigint := 0;
  c bigint;
  a integer;
  k integer;
  event integer := 0;
BEGIN
  FOR a IN 1..n LOOP
    UPDATE runs SET run_length = p_length[a], status = p_status[a], last_hash = p_last_hash[a]
    WHERE session_id = p_session AND run_id = p_run[a] AND run_length = p_expected_length[a]
      AND last_hash IS NOT DISTINCT FROM p_expected_hash[a] AND status = 'running'
      AND EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = p_session);
    moved[a] := FOUND;
    IF FOUND THEN total := total + p_count[a]; END IF;
  END LOOP;
  IF total = 0 THEN RETURN; END IF;
  UPDATE sessions SET last_cursor = sessions.last_cursor + total, updated_at = p_now
  WHERE session_id = p_session
  RETURNING sessions.last_cursor - total INTO c;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'session % lost its counter row', p_session
      USING ERRCODE = 'serialization_failure';
  END IF;
  FOR a IN 1..n LOOP
    IF moved[a] THEN
      FOR k IN event + 1..event + p_count[a] LOOP
        c := c + 1;
        INSERT INTO events
          (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
        VALUES (p_session, c, p_run[a], p_seq[k], p_event_id[k], p_event_type[k],
          p_recorded_at[k], p_body_prefix[k] || c::text || '}');
      END LOOP;
      ord := a;
      last_cursor := c;
      RETURN NEXT;
    END IF;
    event := event + p_count[a];
  END LOOP;
  IF cardinality(p_blob_ref) > 0 THEN
    INSERT INTO blobs (blob_ref, content, touched_at)
    SELECT DISTINCT ON (x.ref) x.ref, x.content,
      (extract(epoch from clock_timestamp()) * 1000)::bigint
    FROM unnest(p_blob_ref, p_blob_content, p_blob_owner) AS x(ref, content, owner)
    WHERE moved[x.owner]
    ORDER BY x.ref
    ON CONFLICT (blob_ref) DO UPDATE SET touched_at = excluded.touched_at;
  END IF;
  IF cardinality(p_ref) > 0 THEN
    INSERT INTO blob_refs (blob_ref, session_id)
    SELECT DISTINCT x.ref, p_session
    FROM unnest(p_ref, p_ref_owner) AS x(ref, owner)
    WHERE moved[x.owner]
    ORDER BY x.ref
    ON CONFLICT DO NOTHING;
  END IF;
END;
$$;
