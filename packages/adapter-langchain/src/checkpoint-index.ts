import type { JsonObject, LedgerEvent } from "@agent-ledger/core";
import {
  compareWritesSortKeys,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { isRecord } from "./plain-json.js";
import { payloadThreadId } from "./thread-run-id.js";

export const CHECKPOINT_KIND = "langgraph.checkpoint";
export const WRITES_TYPE = "x.langgraph.writes";
export const DELETED_TYPE = "x.langgraph.thread-deleted";

/** A serialized value as the saver's serde produced it. */
export interface TypedBytes {
  type: string;
  base64: string;
}

export interface StoredCheckpoint {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | undefined;
  checkpoint: TypedBytes;
  metadata: TypedBytes;
}

export interface StoredWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  value: TypedBytes;
}

/** Checkpoints and pending writes of one thread, rebuilt from its events. */
export interface ThreadIndex {
  /** checkpoint_ns -> checkpoint_id -> checkpoint */
  checkpoints: Map<string, Map<string, StoredCheckpoint>>;
  /** `${ns}\0${checkpointId}` -> `${taskId},${idx}` -> write */
  writes: Map<string, Map<string, StoredWrite>>;
  /**
   * checkpoint_ns -> `${channel}\0${version}` -> the values stored under that key, with the
   * checkpoint that stored each (value null: the channel was empty). Usually one; a fork (time
   * travel, `updateState` on an earlier checkpoint) numbers its versions from its parent's, so
   * two branches can store different values under the same key.
   */
  channels: Map<string, Map<string, ChannelValue[]>>;
}

export interface ChannelValue {
  checkpointId: string;
  value: TypedBytes | null;
}

export function channelKey(channel: string, version: unknown): string {
  return `${channel}\u0000${String(version)}`;
}

function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

function typed(value: unknown): TypedBytes {
  const record = isRecord(value) ? value : {};
  return { type: String(record.type ?? "json"), base64: String(record.base64 ?? "") };
}

export function writesKey(checkpointNs: string, checkpointId: string): string {
  return `${checkpointNs}\u0000${checkpointId}`;
}

/** Index of a thread's events (a ThreadLog's: none from before its last deletion marker). */
export function indexThread(events: readonly LedgerEvent[]): ThreadIndex {
  const index: ThreadIndex = {
    checkpoints: new Map(),
    writes: new Map(),
    channels: new Map(),
  };
  for (const event of events) {
    const payload = isRecord(event.payload) ? (event.payload as JsonObject) : {};
    if (event.type === "checkpoint.saved" && payload.kind === CHECKPOINT_KIND) {
      const checkpointNs = String(payload.checkpointNs ?? "");
      const checkpointId = String(payload.checkpointId);
      const byId = entry(index.checkpoints, checkpointNs, () => new Map());
      byId.set(checkpointId, {
        threadId: String(payloadThreadId(payload)),
        checkpointNs,
        checkpointId,
        parentCheckpointId:
          typeof payload.parentCheckpointId === "string" ? payload.parentCheckpointId : undefined,
        checkpoint: typed(payload.checkpoint),
        metadata: typed(payload.metadata),
      });
      const values = entry(index.channels, checkpointNs, () => new Map());
      for (const blob of Array.isArray(payload.channels) ? payload.channels : []) {
        if (!isRecord(blob)) continue;
        const key = channelKey(String(blob.channel), blob.version);
        entry(values, key, () => []).push({
          checkpointId,
          value: blob.value === null ? null : typed(blob.value),
        });
      }
    } else if (event.type === WRITES_TYPE) {
      const key = writesKey(String(payload.checkpointNs ?? ""), String(payload.checkpointId));
      const stored = entry(index.writes, key, () => new Map());
      const taskId = String(payload.taskId);
      const taskPath = String(payload.taskPath ?? "");
      for (const write of Array.isArray(payload.writes) ? payload.writes : []) {
        if (!isRecord(write)) continue;
        const idx = Number(write.idx);
        const innerKey = `${taskId},${idx}`;
        // Same rule as MemorySaver: a task's regular write is kept once, special ones replaced.
        if (idx >= 0 && stored.has(innerKey)) continue;
        stored.set(innerKey, {
          taskId,
          taskPath,
          idx,
          channel: String(write.channel),
          value: typed(write.value),
        });
      }
    }
  }
  return index;
}

/**
 * The value a checkpoint sees for a channel version: the one stored by the nearest checkpoint
 * of its own lineage (itself, its parent...) that stored this key, not another branch's.
 */
export function channelValue(
  index: ThreadIndex,
  stored: StoredCheckpoint,
  channel: string,
  version: unknown,
): TypedBytes | null | undefined {
  const candidates = index.channels.get(stored.checkpointNs)?.get(channelKey(channel, version));
  if (!candidates || candidates.length === 0) return undefined;
  if (candidates.length === 1) return candidates[0]?.value;
  const byId = index.checkpoints.get(stored.checkpointNs);
  const visited = new Set<string>();
  for (let id: string | undefined = stored.checkpointId; id !== undefined && !visited.has(id); ) {
    visited.add(id);
    const own = candidates.findLast((candidate) => candidate.checkpointId === id);
    if (own) return own.value;
    id = byId?.get(id)?.parentCheckpointId;
  }
  return candidates.at(-1)?.value;
}

/** The writes of one checkpoint in (taskPath, taskId, idx) order. */
export function orderedWrites(
  index: ThreadIndex,
  checkpointNs: string,
  checkpointId: string,
): StoredWrite[] {
  const stored = index.writes.get(writesKey(checkpointNs, checkpointId));
  if (!stored) return [];
  return [...stored.values()].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
}

/** The index a write gets: special channels have fixed negative ones. */
export function writeIdx(channel: string, position: number): number {
  return (WRITES_IDX_MAP as Record<string, number>)[channel] || position;
}
