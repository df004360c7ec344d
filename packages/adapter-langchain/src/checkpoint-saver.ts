import { type EventStore, type JsonObject, LedgerError, type NewEvent } from "@agent-ledger/core";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
} from "@langchain/langgraph-checkpoint";
import {
  CHECKPOINT_KIND,
  channelValue,
  DELETED_TYPE,
  indexThread,
  orderedWrites,
  type StoredCheckpoint,
  type ThreadIndex,
  type TypedBytes,
  WRITES_TYPE,
  writeIdx,
} from "./checkpoint-index.js";
import { checkSaverOptions } from "./option-checks.js";
import { ThreadLogCache } from "./thread-cache.js";
import { type CheckpointPut, type CheckpointWrites, ThreadLog } from "./thread-log.js";
import { payloadThreadId, threadIdFields, threadRunId } from "./thread-run-id.js";

export interface LedgerCheckpointSaverOptions {
  store: EventStore;
  /** The session whose runs hold the threads (one run per thread_id). */
  sessionId?: string;
  serde?: SerializerProtocol;
  /**
   * How many threads' logs stay in memory (the most recently used; default 100). Another
   * thread is read again from the store when it is next used.
   */
  cachedThreads?: number;
}

export const DEFAULT_CHECKPOINT_SESSION = "langgraph-checkpoints";
const DEFAULT_CACHED_THREADS = 100;

function jsonText(value: unknown): string | undefined {
  return value === undefined ? undefined : JSON.stringify(value);
}

function requireThreadId(config: RunnableConfig, action: string): string {
  const threadId = config.configurable?.thread_id;
  if (threadId === undefined || threadId === null || threadId === "")
    throw new LedgerError(
      "invalid-argument",
      `Failed to ${action}: config.configurable.thread_id is required (graph.invoke(input, { configurable: { thread_id } }))`,
      { path: "$.configurable.thread_id" },
    );
  return String(threadId);
}

/**
 * A LangGraph checkpoint saver on the ledger (any EventStore): each thread is a run of a
 * dedicated session, each `put` a `checkpoint.saved` event and each `putWrites` an
 * `x.langgraph.writes` event holding the serde's bytes (base64). An agent compiled with it
 * resumes after a crash with `invoke(null, { configurable: { thread_id } })`.
 */
export class LedgerCheckpointSaver extends BaseCheckpointSaver {
  readonly store: EventStore;
  readonly sessionId: string;
  readonly #threads: ThreadLogCache;

  constructor(options: LedgerCheckpointSaverOptions) {
    checkSaverOptions(options);
    super(options.serde);
    this.store = options.store;
    this.sessionId = options.sessionId ?? DEFAULT_CHECKPOINT_SESSION;
    this.#threads = new ThreadLogCache(
      Math.max(1, options.cachedThreads ?? DEFAULT_CACHED_THREADS),
      (threadId) => new ThreadLog(this.store, this.sessionId, threadRunId(threadId)),
    );
  }

  async #index(threadId: string): Promise<ThreadIndex> {
    return indexThread(await this.#threads.use(threadId, (log) => log.sync()));
  }

  async #dump(value: unknown): Promise<TypedBytes> {
    const [type, data] = await this.serde.dumpsTyped(value);
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
    return { type, base64: bytes.toString("base64") };
  }

  #load(value: TypedBytes): Promise<unknown> {
    return this.serde.loadsTyped(value.type, new Uint8Array(Buffer.from(value.base64, "base64")));
  }

  async #tuple(index: ThreadIndex, stored: StoredCheckpoint): Promise<CheckpointTuple> {
    const checkpoint = (await this.#load(stored.checkpoint)) as Checkpoint;
    const { threadId, checkpointNs, checkpointId, parentCheckpointId } = stored;
    // Channel values are stored once per (channel, version): rebuild them from the versions.
    const channelValues: Record<string, unknown> = {};
    for (const [channel, version] of Object.entries(checkpoint.channel_versions ?? {})) {
      const blob = channelValue(index, stored, channel, version);
      if (blob) channelValues[channel] = await this.#load(blob);
    }
    checkpoint.channel_values = channelValues;
    if (checkpoint.v < 4 && parentCheckpointId !== undefined)
      await this.#migratePendingSends(index, checkpoint, checkpointNs, parentCheckpointId);
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      orderedWrites(index, checkpointNs, checkpointId).map(
        async (write) =>
          [write.taskId, write.channel, await this.#load(write.value)] as CheckpointPendingWrite,
      ),
    );
    const tuple: CheckpointTuple = {
      config: {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: checkpointNs,
          checkpoint_id: checkpointId,
        },
      },
      checkpoint,
      metadata: (await this.#load(stored.metadata)) as CheckpointMetadata,
      pendingWrites,
    };
    if (parentCheckpointId !== undefined)
      tuple.parentConfig = {
        configurable: {
          thread_id: threadId,
          checkpoint_ns: checkpointNs,
          checkpoint_id: parentCheckpointId,
        },
      };
    return tuple;
  }

  // Checkpoints before format v4 kept pending sends as TASKS writes of their parent.
  async #migratePendingSends(
    index: ThreadIndex,
    checkpoint: Checkpoint,
    checkpointNs: string,
    parentCheckpointId: string,
  ): Promise<void> {
    const sends = await Promise.all(
      orderedWrites(index, checkpointNs, parentCheckpointId)
        .filter((write) => write.channel === TASKS)
        .map((write) => this.#load(write.value)),
    );
    const mutable = checkpoint as {
      channel_values: Record<string, unknown>;
      channel_versions: ChannelVersions;
    };
    mutable.channel_values ??= {};
    mutable.channel_values[TASKS] = sends;
    mutable.channel_versions ??= {};
    mutable.channel_versions[TASKS] =
      Object.keys(mutable.channel_versions).length > 0
        ? maxChannelVersion(...Object.values(mutable.channel_versions))
        : this.getNextVersion(undefined);
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined || threadId === null) return undefined;
    const checkpointNs = String(config.configurable?.checkpoint_ns ?? "");
    const checkpointId = getCheckpointId(config);
    const index = await this.#index(String(threadId));
    const byId = index.checkpoints.get(checkpointNs);
    if (!byId) return undefined;
    const id = checkpointId || [...byId.keys()].sort().at(-1);
    const stored = id === undefined ? undefined : byId.get(id);
    if (!stored) return undefined;
    // The latest, read to go on from it: a put after it by another writer makes this one stale.
    if (!checkpointId)
      await this.#threads.use(String(threadId), async (log) =>
        log.noteHead(checkpointNs, stored.checkpointId),
      );
    return this.#tuple(index, stored);
  }

  override async *list(
    config: RunnableConfig,
    options?: CheckpointListOptions,
  ): AsyncGenerator<CheckpointTuple> {
    const { before, filter } = options ?? {};
    let limit = options?.limit;
    const threadIds =
      config.configurable?.thread_id !== undefined
        ? [String(config.configurable.thread_id)]
        : await this.#allThreadIds();
    const wantedNs = config.configurable?.checkpoint_ns as string | undefined;
    const wantedId = config.configurable?.checkpoint_id as string | undefined;
    const beforeId = before?.configurable?.checkpoint_id as string | undefined;
    // As SqliteSaver: values compare as JSON (objects and arrays by content), undefined ones
    // filter nothing.
    const wanted = Object.entries(filter ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, jsonText(value)] as const);
    // Newest first across every thread and namespace it reads, as the SQL savers order them
    // (ORDER BY checkpoint_id DESC): `limit` then keeps the most recent checkpoints, not the
    // first thread's. The indexes read for it are kept for the yields, as many as the cache
    // keeps threads: beyond that, holding every thread's index would undo `cachedThreads`, and
    // a thread's index is built again when the list comes back to it.
    const found: { threadId: string; checkpointNs: string; id: string }[] = [];
    const indexes = new Map<string, ThreadIndex>();
    for (const threadId of threadIds) {
      const index = await this.#index(threadId);
      if (indexes.size < this.#threads.capacity) indexes.set(threadId, index);
      for (const [checkpointNs, byId] of index.checkpoints) {
        if (wantedNs !== undefined && checkpointNs !== wantedNs) continue;
        for (const id of byId.keys()) {
          if (wantedId && id !== wantedId) continue;
          if (beforeId && id >= beforeId) continue;
          found.push({ threadId, checkpointNs, id });
        }
      }
    }
    found.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
    let current: { threadId: string; index: ThreadIndex } | undefined;
    for (const { threadId, checkpointNs, id } of found) {
      let index = indexes.get(threadId);
      if (index === undefined) {
        if (current?.threadId !== threadId)
          current = { threadId, index: await this.#index(threadId) };
        index = current.index;
      }
      const stored = index.checkpoints.get(checkpointNs)?.get(id);
      if (stored === undefined) continue; // deleted meanwhile
      if (wanted.length > 0) {
        const metadata = (await this.#load(stored.metadata)) as Record<string, unknown>;
        if (!wanted.every(([key, json]) => jsonText(metadata?.[key]) === json)) continue;
      }
      if (limit !== undefined) {
        if (limit <= 0) return;
        limit -= 1;
      }
      yield await this.#tuple(index, stored);
    }
  }

  async #allThreadIds(): Promise<string[]> {
    const runs = await this.store.listRuns(this.sessionId);
    const threadIds: string[] = [];
    for (const run of runs) {
      const page = await this.store.readRun({
        sessionId: this.sessionId,
        runId: run.runId,
        limit: 1,
      });
      const threadId = payloadThreadId(page.events[0]?.payload as JsonObject | undefined);
      if (threadId !== undefined) threadIds.push(threadId);
    }
    return threadIds;
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions = {},
  ): Promise<RunnableConfig> {
    const threadId = requireThreadId(config, "put checkpoint");
    const checkpointNs = String(config.configurable?.checkpoint_ns ?? "");
    const parentCheckpointId = config.configurable?.checkpoint_id as string | undefined;
    // Only channels with a new version are stored (once per version), like the SQL savers.
    const { channel_values: channelValues, ...rest } = copyCheckpoint(checkpoint);
    const channels = await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => ({
        channel,
        version,
        value: channel in channelValues ? { ...(await this.#dump(channelValues[channel])) } : null,
      })),
    );
    const [serializedCheckpoint, serializedMetadata] = await Promise.all([
      this.#dump({ ...rest, channel_values: {} }),
      this.#dump(metadata),
    ]);
    await this.#append(
      threadId,
      [
        {
          type: "checkpoint.saved",
          payload: {
            kind: CHECKPOINT_KIND,
            ...threadIdFields(threadId),
            checkpointNs,
            checkpointId: checkpoint.id,
            parentCheckpointId: parentCheckpointId ?? null,
            checkpoint: { ...serializedCheckpoint },
            metadata: { ...serializedMetadata },
            channels,
          },
        },
      ],
      { checkpointNs, checkpointId: checkpoint.id, parentId: parentCheckpointId },
    );
    return {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpoint.id,
      },
    };
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    const threadId = requireThreadId(config, "put writes");
    const checkpointId = config.configurable?.checkpoint_id;
    if (checkpointId === undefined || checkpointId === null)
      throw new LedgerError(
        "invalid-argument",
        "Failed to put writes: config.configurable.checkpoint_id is required",
        { path: "$.configurable.checkpoint_id" },
      );
    const serialized = await Promise.all(
      writes.map(async ([channel, value], position) => ({
        idx: writeIdx(channel, position),
        channel,
        value: { ...(await this.#dump(value)) },
      })),
    );
    const checkpointNs = String(config.configurable?.checkpoint_ns ?? "");
    // Refused, as a put is, on the checkpoint another writer went on from (a worker taken for dead).
    const onHead = { writes: true, checkpointNs, checkpointId: String(checkpointId) } as const;
    await this.#append(
      threadId,
      [
        {
          type: WRITES_TYPE,
          payload: {
            ...threadIdFields(threadId),
            checkpointNs,
            checkpointId: String(checkpointId),
            taskId,
            taskPath: taskPath ?? "",
            writes: serialized,
          },
        },
      ],
      onHead,
    );
  }

  async #append(
    threadId: string,
    events: NewEvent[],
    put?: CheckpointPut | CheckpointWrites,
  ): Promise<void> {
    await this.#threads.use(threadId, (log) => log.append(threadId, events, put));
  }

  override async deleteThread(threadId: string): Promise<void> {
    await this.#threads.use(threadId, async (log) => {
      const events = await log.sync();
      if (events.length === 0) return;
      await log.append(threadId, [
        { type: DELETED_TYPE, payload: { ...threadIdFields(threadId) } },
      ]);
    });
    this.#threads.drop(threadId);
  }
}
