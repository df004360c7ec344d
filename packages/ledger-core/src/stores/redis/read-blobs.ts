import { readBlob, readBlobs } from "../../store/blob.js";
import { unavailable } from "./client.js";
import { blobKeys } from "./keys.js";
import type { RedisStoreState } from "./store-state.js";

/** `RedisEventStore.getBlob`. */
export async function readStoredBlob(state: RedisStoreState, ref: string): Promise<Uint8Array> {
  return readBlob(ref, async (known) => {
    try {
      return await state.client.getBuffer(blobKeys(state.prefix, known.slice(7)).content);
    } catch (error) {
      throw unavailable(error, "getBlob", state.client);
    }
  });
}

/** `RedisEventStore.getBlobs`. */
export async function readStoredBlobs(
  state: RedisStoreState,
  refs: string[],
): Promise<Map<string, Uint8Array>> {
  return readBlobs(refs, async (unique) => {
    let values: (Buffer | null)[];
    try {
      // One command per key (pipelined on the wire): blob keys are in different Cluster slots.
      values = await Promise.all(
        unique.map((ref) => state.client.getBuffer(blobKeys(state.prefix, ref.slice(7)).content)),
      );
    } catch (error) {
      throw unavailable(error, "getBlobs", state.client);
    }
    const found = new Map<string, Uint8Array>();
    unique.forEach((ref, index) => {
      const value = values[index];
      if (value) found.set(ref, value);
    });
    return found;
  });
}
