CREATE TABLE `blob_refs` (
	`blob_ref` varchar(80) NOT NULL,
	`session_id` varbinary(1020) NOT NULL,
	CONSTRAINT `blob_refs_blob_ref_session_id_pk` PRIMARY KEY(`blob_ref`,`session_id`)
);
--> statement-breakpoint
ALTER TABLE `blobs` ADD `touched_at` bigint DEFAULT 0 NOT NULL;