CREATE TABLE `blobs` (
	`blob_ref` varchar(80) NOT NULL,
	`content` longblob NOT NULL,
	CONSTRAINT `blobs_blob_ref` PRIMARY KEY(`blob_ref`)
);
--> statement-breakpoint
CREATE TABLE `events` (
	`session_id` varbinary(1020) NOT NULL,
	`commit_cursor` bigint unsigned NOT NULL,
	`run_id` varbinary(1020) NOT NULL,
	`seq` int unsigned NOT NULL,
	`event_id` varbinary(1020) NOT NULL,
	`event_type` varchar(255) NOT NULL,
	`recorded_at` varchar(40) NOT NULL,
	`body` longtext NOT NULL,
	CONSTRAINT `events_session_id_commit_cursor_pk` PRIMARY KEY(`session_id`,`commit_cursor`),
	CONSTRAINT `events_run_seq` UNIQUE(`session_id`,`run_id`,`seq`),
	CONSTRAINT `events_event_id` UNIQUE(`session_id`,`event_id`)
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`session_id` varbinary(1020) NOT NULL,
	`run_id` varbinary(1020) NOT NULL,
	`run_length` int unsigned NOT NULL,
	`status` varchar(16) NOT NULL,
	`last_hash` varchar(80),
	`parent_run_id` varbinary(1020),
	`started_at` varchar(40) NOT NULL,
	CONSTRAINT `runs_session_id_run_id_pk` PRIMARY KEY(`session_id`,`run_id`)
);
--> statement-breakpoint
CREATE TABLE `schema_version` (
	`version` int NOT NULL,
	`tag` varchar(255) NOT NULL,
	`applied_at` varchar(40) NOT NULL,
	CONSTRAINT `schema_version_version` PRIMARY KEY(`version`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`session_id` varbinary(1020) NOT NULL,
	`last_cursor` bigint unsigned NOT NULL,
	`created_at` varchar(40) NOT NULL,
	`updated_at` varchar(40) NOT NULL,
	CONSTRAINT `sessions_session_id` PRIMARY KEY(`session_id`)
);
--> statement-breakpoint
CREATE INDEX `runs_parent` ON `runs` (`session_id`,`parent_run_id`);