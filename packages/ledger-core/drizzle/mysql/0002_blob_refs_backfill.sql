-- The blob reference index (0001) started empty: events written before it name blobs that no
-- blob_refs row records, so deleting another session that names the same blob collected it.
-- Index every stored event's evidenceRefs arrays. Only the array is parsed as JSON (a body may
-- hold a lone surrogate escape, which the server's JSON functions refuse); an array of refs
-- holds no `]`, so it ends at the first one.
INSERT IGNORE INTO `blob_refs` (`blob_ref`, `session_id`)
	WITH RECURSIVE lists (session_id, body, at) AS (
		SELECT `session_id`, `body`, LOCATE('"evidenceRefs":[', `body`) FROM `events`
		WHERE LOCATE('"evidenceRefs":[', `body`) > 0
		UNION ALL
		SELECT session_id, body, LOCATE('"evidenceRefs":[', body, at + 1) FROM lists
		WHERE LOCATE('"evidenceRefs":[', body, at + 1) > 0
	)
	SELECT DISTINCT refs.ref, lists.session_id
	FROM lists, JSON_TABLE(
		SUBSTRING(lists.body, lists.at + 15, LOCATE(']', lists.body, lists.at + 16) - lists.at - 14),
		'$[*]' COLUMNS (ref VARCHAR(80) PATH '$')
	) AS refs
	WHERE refs.ref REGEXP '^sha256:[0-9a-f]{64}$';
