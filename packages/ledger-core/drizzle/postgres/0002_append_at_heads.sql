-- Appends to several runs of one session in one call (the store's group commit; see
-- PostgresBackend.appendAtHeads). Arrays hold one element per append, sorted by run, and the
-- events of all appends in that order. Each append is written only if its run's stored head
-- still is the expected one; the others write nothing. The runs rows are locked first, in key
-- order, then the session's row, as the transactional path and other batches do. Returns one row
-- (ord, last_cursor) per append written. Runs with the search_path it was created under (the
-- store's schema).
CREATE FUNCTION agent_ledger_append_at_heads(
  p_session text, p_run text[], p_length integer[], p_status text[], p_last_hash text[],
  p_expected_length integer[], p_expected_hash text[], p_count integer[], p_now text,
  p_seq integer[], p_event_id text[], p_event_type text[], p_recorded_at text[],
  p_body_prefix text[]
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
END;
$$;
