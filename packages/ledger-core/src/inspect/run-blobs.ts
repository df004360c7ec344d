import { asEscape, asMarker } from "../compact/marker.js";
import { LedgerError } from "../events/errors.js";
import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { blobRef } from "../store/blob.js";
import type { EventStore } from "../store/event-store.js";

/** A blob a run's events name that is not in the store, or whose content is not its hash's. */
export interface BadBlob {
  ref: string;
  problem: "missing" | "corrupt";
  /** The seq of the first event of the run that names it. */
  seq: number;
}

/**
 * Blobs read at once: a batch's contents are all in memory together (a tool result may be
 * megabytes), and a long run names tens of thousands.
 */
export const BLOB_BATCH = 100;

/**
 * The blobs a run's events name (`evidenceRefs`, and the markers in their payloads), each
 * checked once: present, and hashing to its reference. Events are noted in seq order; `check`
 * reads what was noted since, `BLOB_BATCH` blobs at a time, and reports the first that fails
 * by the seq of the event that first named it.
 */
export class RunBlobCheck {
  readonly #store: EventStore;
  readonly #seen = new Set<string>();
  #pending: { ref: string; seq: number }[] = [];

  constructor(store: EventStore) {
    this.#store = store;
  }

  /** Notes the blobs `event` names that no earlier event of the run named. */
  add(event: LedgerEvent): void {
    for (const ref of event.evidenceRefs ?? []) this.#note(ref, event.seq);
    this.#walk(event.payload, event.seq);
  }

  #note(ref: string, seq: number): void {
    if (this.#seen.has(ref)) return;
    this.#seen.add(ref);
    this.#pending.push({ ref, seq });
  }

  // The markers a payload holds itself; those inside its blobs were named in `evidenceRefs` by
  // the event that stored them.
  #walk(value: JsonValue, seq: number): void {
    if (value === null || typeof value !== "object") return;
    const marker = asMarker(value);
    if (marker) {
      this.#note(marker.ref, seq);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) this.#walk(item, seq);
      return;
    }
    // An escaped user object: its fields are data, in stored form (markers included).
    const source = asEscape(value) ?? value;
    for (const key of Object.keys(source)) this.#walk(source[key] as JsonValue, seq);
  }

  /** Checks the blobs noted since the last call: the first that fails, or undefined. */
  async check(): Promise<BadBlob | undefined> {
    const pending = this.#pending;
    this.#pending = [];
    for (let start = 0; start < pending.length; start += BLOB_BATCH) {
      const bad = await this.#checkBatch(pending.slice(start, start + BLOB_BATCH));
      if (bad) return bad;
    }
    return undefined;
  }

  async #checkBatch(batch: { ref: string; seq: number }[]): Promise<BadBlob | undefined> {
    const store = this.#store;
    let found: Map<string, Uint8Array> | undefined;
    if (store.getBlobs) {
      try {
        found = await store.getBlobs(batch.map((item) => item.ref));
      } catch (error) {
        // The store's own hash check fails the batch at the first bad blob it decodes, which
        // need not be the first named: each is read alone below.
        if (!LedgerError.isInstance(error, "tamper-detected")) throw error;
      }
    }
    if (found !== undefined) {
      for (const { ref, seq } of batch) {
        const bytes = found.get(ref);
        if (bytes === undefined) return { ref, seq, problem: "missing" };
        // Checked here too: a store need not check what it returns.
        if (blobRef(bytes) !== ref) return { ref, seq, problem: "corrupt" };
      }
      return undefined;
    }
    const read = await Promise.allSettled(batch.map((item) => store.getBlob(item.ref)));
    for (const [index, { ref, seq }] of batch.entries()) {
      const outcome = read[index] as PromiseSettledResult<Uint8Array>;
      if (outcome.status === "fulfilled") {
        if (blobRef(outcome.value) !== ref) return { ref, seq, problem: "corrupt" };
        continue;
      }
      const error = outcome.reason;
      if (LedgerError.isInstance(error, "not-found")) return { ref, seq, problem: "missing" };
      if (LedgerError.isInstance(error, "tamper-detected")) return { ref, seq, problem: "corrupt" };
      throw error;
    }
    return undefined;
  }
}

/** How `verifyRun` states a bad blob. */
export function badBlobReason(bad: BadBlob): string {
  return `blob ${bad.ref} named at seq ${bad.seq} ${bad.problem === "missing" ? "is not in the store" : "does not hash to its reference"}`;
}
