import { bufferOf, type EncodedBlob } from "../../store/blob.js";
import { isCluster, unavailable } from "./client.js";
import { blobKeys, blobScriptKeys, idField, sessionKeys } from "./keys.js";
import { PUT_BLOB_SCRIPT, runScript } from "./scripts.js";
import type { RedisStoreState } from "./store-state.js";

/**
 * The blob reference index, written BEFORE the append script on a Cluster: there the blob
 * keys live on other nodes, out of the script's reach (on one server the script writes it).
 * Indexing first errs on the safe side: a failed append leaves a reference that only keeps a
 * blob longer, while its session exists (collectBlobs removes the claims of gone sessions,
 * also where no blob is left).
 */
export async function indexRefs(
  state: RedisStoreState,
  sessionId: string,
  refs: string[],
): Promise<void> {
  if (refs.length === 0) return;
  const member = idField(sessionId);
  await Promise.all(
    refs.map((ref) => state.client.sadd(blobKeys(state.prefix, ref.slice(7)).sessions, member)),
  );
}

/** `RedisEventStore.putBlobs` once its contents are prepared: the blobs stored, then listed. */
export async function putEncodedBlobs(
  state: RedisStoreState,
  blobs: EncodedBlob[],
  sessionId: string | undefined,
): Promise<string[]> {
  if (blobs.length === 0) return [];
  const unique = await storeBlobs(state, blobs, sessionId);
  await listPuts(state, unique, sessionId);
  return blobs.map((blob) => blob.ref);
}

/**
 * Per blob, one script in the blob's slot: the session's claim, SET NX and the touched-at
 * time together, so retention sees all or none; on one server also the blob's entry in the
 * session's list of what was put for it (its `puts` set), which its deletion collects even if
 * no event of it ever names them. Returns the blobs, each once.
 */
export async function storeBlobs(
  state: RedisStoreState,
  blobs: EncodedBlob[],
  sessionId: string | undefined,
): Promise<EncodedBlob[]> {
  const member = sessionId === undefined ? "" : idField(sessionId);
  // Each blob once (the same content twice in a batch is one put).
  const unique = [...new Map(blobs.map((blob) => [blob.ref, blob])).values()];
  const puts =
    sessionId === undefined || isCluster(state.client)
      ? []
      : [sessionKeys(state.prefix, sessionId).puts];
  try {
    await Promise.all(
      unique.map((blob) =>
        runScript(
          state.client,
          PUT_BLOB_SCRIPT,
          [...blobScriptKeys(state.prefix, blob.ref.slice(7)), ...puts],
          [bufferOf(blob.stored), member, blob.ref],
        ),
      ),
    );
  } catch (error) {
    throw unavailable(error, "putBlob", state.client);
  }
  return unique;
}

/**
 * On a Cluster, the blobs put for a session added to its `puts` set, which lives in the
 * session's slot, out of the blob scripts' reach: only after those scripts, so that
 * collectBlobs can tell an entry it removes behind a put from a stale one (collect-blobs.ts).
 * A deletion of the session in between misses the blobs, whose claims then name a gone
 * session, so collectBlobs takes them, as after any put that races a deletion. (On one server
 * the scripts listed them.)
 */
export async function listPuts(
  state: RedisStoreState,
  blobs: EncodedBlob[],
  sessionId: string | undefined,
): Promise<void> {
  if (sessionId === undefined || !isCluster(state.client) || blobs.length === 0) return;
  try {
    await state.client.sadd(
      sessionKeys(state.prefix, sessionId).puts,
      ...blobs.map((blob) => blob.ref),
    );
  } catch (error) {
    throw unavailable(error, "putBlob", state.client);
  }
}
