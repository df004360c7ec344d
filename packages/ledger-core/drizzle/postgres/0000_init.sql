CREATE TABLE "blobs" (
	"blob_ref" text PRIMARY KEY NOT NULL,
	"content" "bytea" NOT NULL
);
--> statement-breakpoint
CREATE TABLE "events" (
	"session_id" text NOT NULL,
	"commit_cursor" bigint NOT NULL,
	"run_id" text NOT NULL,
	"seq" integer NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"recorded_at" text NOT NULL,
	"body" text NOT NULL,
	CONSTRAINT "events_session_id_commit_cursor_pk" PRIMARY KEY("session_id","commit_cursor")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"session_id" text NOT NULL,
	"run_id" text NOT NULL,
	"run_length" integer NOT NULL,
	"status" text NOT NULL,
	"last_hash" text,
	"parent_run_id" text,
	"started_at" text NOT NULL,
	CONSTRAINT "runs_session_id_run_id_pk" PRIMARY KEY("session_id","run_id")
);
--> statement-breakpoint
CREATE TABLE "schema_version" (
	"version" integer PRIMARY KEY NOT NULL,
	"tag" text NOT NULL,
	"applied_at" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"session_id" text PRIMARY KEY NOT NULL,
	"last_cursor" bigint NOT NULL,
	"created_at" text NOT NULL,
	"updated_at" text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "events_run_seq" ON "events" USING btree ("session_id","run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "events_event_id" ON "events" USING btree ("session_id","event_id");--> statement-breakpoint
CREATE INDEX "runs_parent" ON "runs" USING btree ("session_id","parent_run_id");