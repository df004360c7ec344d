-- The blob reference index (0001) started empty: events written before it name blobs that no
-- blob_refs row records, so deleting another session that names the same blob collected it.
-- Index every stored event's evidenceRefs. Bodies written before 0001 are TEXT (compressed
-- bodies came later, with the index); json_valid keeps a row that is not JSON (the store
-- writes none) from failing every init.
INSERT OR IGNORE INTO `blob_refs` (`digest`, `session_id`)
	SELECT DISTINCT unhex(substr(ref.value, 8)), e.`session_id`
	FROM `events` e, json_each(e.`body`, '$.evidenceRefs') ref
	WHERE typeof(e.`body`) = 'text' AND instr(e.`body`, '"evidenceRefs":[') > 0
		AND json_valid(e.`body`) AND ref.type = 'text' AND ref.value GLOB 'sha256:*'
		AND length(ref.value) = 71;
