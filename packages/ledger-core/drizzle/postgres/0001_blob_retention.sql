CREATE TABLE "blob_refs" (
	"blob_ref" text NOT NULL,
	"session_id" text NOT NULL,
	CONSTRAINT "blob_refs_blob_ref_session_id_pk" PRIMARY KEY("blob_ref","session_id")
);
--> statement-breakpoint
ALTER TABLE "blobs" ADD COLUMN "touched_at" bigint DEFAULT 0 NOT NULL;