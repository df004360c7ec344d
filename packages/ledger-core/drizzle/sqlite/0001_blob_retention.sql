CREATE TABLE `blob_refs` (
	`blob_ref` text NOT NULL,
	`session_id` text NOT NULL,
	PRIMARY KEY(`blob_ref`, `session_id`)
) WITHOUT ROWID;
--> statement-breakpoint
ALTER TABLE `blobs` ADD `touched_at` integer DEFAULT 0 NOT NULL;