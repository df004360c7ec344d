-- Blobs and their reference index keyed by the 32-byte sha256 digest (a BLOB) instead of the
-- 71-character `sha256:<hex>` text: half the key bytes in every row and index entry.
CREATE TABLE `blobs_new` (
	`digest` blob PRIMARY KEY NOT NULL,
	`content` blob NOT NULL,
	`touched_at` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
INSERT INTO `blobs_new` (`digest`, `content`, `touched_at`)
	SELECT unhex(substr(`blob_ref`, 8)), `content`, `touched_at` FROM `blobs`;
--> statement-breakpoint
DROP TABLE `blobs`;
--> statement-breakpoint
ALTER TABLE `blobs_new` RENAME TO `blobs`;
--> statement-breakpoint
CREATE TABLE `blob_refs_new` (
	`digest` blob NOT NULL,
	`session_id` text NOT NULL,
	PRIMARY KEY(`digest`, `session_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `blob_refs_new` (`digest`, `session_id`)
	SELECT unhex(substr(`blob_ref`, 8)), `session_id` FROM `blob_refs`;
--> statement-breakpoint
DROP TABLE `blob_refs`;
--> statement-breakpoint
ALTER TABLE `blob_refs_new` RENAME TO `blob_refs`;
