-- Appends stop updating counter rows. While a run is open its length and last hash are its
-- last event's, and a session's last cursor is its largest (appends hold the write lock), so an
-- append writes its event rows only. Closing a run writes its final head into the runs row
-- (closed_length, closed_hash): a witness of the tail of a closed run. Runs closed before this
-- migration keep theirs.
ALTER TABLE `runs` ADD `closed_length` integer;--> statement-breakpoint
ALTER TABLE `runs` ADD `closed_hash` text;--> statement-breakpoint
UPDATE `runs` SET `closed_length` = `run_length`, `closed_hash` = `last_hash` WHERE `status` <> 'running';--> statement-breakpoint
ALTER TABLE `runs` DROP COLUMN `run_length`;--> statement-breakpoint
ALTER TABLE `runs` DROP COLUMN `last_hash`;--> statement-breakpoint
ALTER TABLE `sessions` DROP COLUMN `last_cursor`;--> statement-breakpoint
ALTER TABLE `sessions` DROP COLUMN `updated_at`;
