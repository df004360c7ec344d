-- Appends stop updating counter rows: a run's length and last hash are its last event's, a
-- session's last cursor is its largest (appends hold the write lock). An append then writes
-- its event rows only. The runs row keeps the status, which changes once, when the run closes.
ALTER TABLE `runs` DROP COLUMN `run_length`;--> statement-breakpoint
ALTER TABLE `runs` DROP COLUMN `last_hash`;--> statement-breakpoint
ALTER TABLE `sessions` DROP COLUMN `last_cursor`;--> statement-breakpoint
ALTER TABLE `sessions` DROP COLUMN `updated_at`;