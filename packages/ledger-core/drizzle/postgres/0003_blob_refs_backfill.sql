-- The blob reference index (0001) started empty: events written before it name blobs that no
-- blob_refs row records, so deleting another session that names the same blob collected it.
-- Index every stored event's evidenceRefs arrays. Read as text, not jsonb: a body may hold
-- \u0000, which jsonb refuses. An array of refs holds no `]`, so the pattern reads it whole.
INSERT INTO "blob_refs" ("blob_ref", "session_id")
	SELECT DISTINCT ref.found[1], e."session_id"
	FROM "events" e
	CROSS JOIN LATERAL regexp_matches(e."body", '"evidenceRefs":\[([^]]*)\]', 'g') AS list(found)
	CROSS JOIN LATERAL regexp_matches(list.found[1], '"(sha256:[0-9a-f]{64})"', 'g') AS ref(found)
	WHERE strpos(e."body", '"evidenceRefs":[') > 0
	ON CONFLICT DO NOTHING;
