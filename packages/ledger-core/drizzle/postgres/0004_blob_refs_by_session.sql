-- A deleted session's own blob refs, found by session: without this index every deleteSession
-- scanned the reference rows of every session (twice: to collect its blobs, then to delete them).
CREATE INDEX "blob_refs_session" ON "blob_refs" USING btree ("session_id");