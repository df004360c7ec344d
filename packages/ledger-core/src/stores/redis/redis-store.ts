import type { Cluster, Redis } from "ioredis";
import type { RunHead } from "../../events/types.js";
import { prepareBlob, prepareBlobs, putBlobSession } from "../../store/blob.js";
import { ClosingGate } from "../../store/closing-gate.js";
import type {
  AppendRequest,
  AppendResult,
  CollectBlobsOptions,
  CollectBlobsResult,
  DeleteSessionOptions,
  DeleteSessionResult,
  EventPage,
  EventStore,
  ForkRequest,
  InitOptions,
  ListSessionsRequest,
  PutBlobOptions,
  ReadRunRequest,
  ReadSessionRequest,
  RunSummary,
  SessionPage,
  StoreDescription,
} from "../../store/event-store.js";
import { checkedInitOptions } from "../../store/init-options.js";
import {
  blobGraceMs,
  collectAsIfDeleted,
  collectDryRun,
  collectResult,
} from "../../store/retention.js";
import { stopSignal } from "../../store/stop-signal.js";
import { retryRead } from "../read-retry.js";
import { appendEvents } from "./append-events.js";
import { lostConnection, unavailable, unknownDurability } from "./client.js";
import { collectOrphanBlobs } from "./collect-blobs.js";
import { BLOBS_PER_ROUND_TRIP, deleteStoredSession } from "./delete-session.js";
import { forkRun } from "./fork-run.js";
import { initStore } from "./init-store.js";
import { openClient } from "./open-client.js";
import { putEncodedBlobs } from "./put-blobs.js";
import { readStoredBlob, readStoredBlobs } from "./read-blobs.js";
import { listRunSummaries, readRunEvents, readRunHead, readSessionEvents } from "./read-events.js";
import { listSessionPage } from "./session-index.js";
import { RedisStoreState } from "./store-state.js";

export interface RedisEventStoreOptions {
  /** An ioredis `Redis` or `Cluster` the application made; the store never quits it. */
  client?: Redis | Cluster;
  /**
   * `redis://...` or `rediss://...`: the store makes (and on close quits) its own client.
   * `?keyPrefix=...` sets the key prefix (so `openStore` URLs can carry it).
   */
  url?: string;
  /** Prefix of every key the store writes (default `agent-ledger:`), e.g. to share a database. */
  keyPrefix?: string;
  /**
   * For a client the store makes from `url`: the bound, in ms, on each wait for the server (to
   * connect, for each command's reply; a connection that stopped answering is replaced). Past
   * it the call fails with `store-unavailable` (an append's outcome is then unknown, as after a
   * dropped connection). The URL can set it as `?timeoutMs=`; default 30000; 0: no bound of the
   * store's. ioredis' `connectTimeout`, `commandTimeout` and `socketTimeout` in the URL keep
   * their meaning. Refused with `client`: give your client those options yourself.
   */
  timeoutMs?: number;
}

/**
 * The ledger on Redis (§4). Each append is one Lua script that checks and writes atomically;
 * every key of a session shares the session's hash tag, so the store works on Redis Cluster.
 * Durability is the server's setting (appendonly, appendfsync): `describe()` reports it.
 */
export class RedisEventStore implements EventStore {
  readonly #owned: boolean;
  readonly #gate = new ClosingGate("redis");
  readonly #location: string;
  /**
   * The client, the key prefix, the caches and the group commit of appends, handed to the
   * functions of each concept (append-events.ts, read-events.ts, delete-session.ts...).
   */
  readonly #state: RedisStoreState;
  #durability: Record<string, string> = unknownDurability();

  constructor(options: RedisEventStoreOptions) {
    const { client, owned, prefix, location } = openClient(options);
    this.#owned = owned;
    this.#location = location;
    this.#state = new RedisStoreState({ client, prefix });
  }

  /** A store on its own client for `redis://` or `rediss://` URLs (openStore calls init). */
  static fromUrl(url: string): EventStore {
    return new RedisEventStore({ url });
  }

  init(options?: InitOptions): Promise<void> {
    return this.#gate.run("init", async () => {
      this.#durability = await initStore(
        this.#state,
        this.#location,
        this.#owned ? "$.url" : "$.client",
        checkedInitOptions(options),
      );
    });
  }

  append(request: AppendRequest): Promise<AppendResult> {
    return this.#gate.run("append", () => appendEvents(this.#state, request));
  }

  readRun(request: ReadRunRequest): Promise<EventPage> {
    return this.#read("readRun", () => readRunEvents(this.#state, request));
  }

  readSession(request: ReadSessionRequest): Promise<EventPage> {
    return this.#read("readSession", () => readSessionEvents(this.#state, request));
  }

  listRuns(sessionId: string): Promise<RunSummary[]> {
    return this.#read("listRuns", () => listRunSummaries(this.#state, sessionId));
  }

  /**
   * The index can name a session that has no events: an append's ZADD can land after a
   * `deleteSession` that ran between it and the append's script (the index lives outside the
   * session's slot, so no script can write both). Such a member is skipped, not removed: a
   * removal could race the session's next first append and unlist a session that has events.
   * A page skips them and reads on until it has its `limit` sessions, or the index ends.
   */
  listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    return this.#read("listSessions", () => listSessionPage(this.#state, request));
  }

  runHead(request: { sessionId: string; runId: string }): Promise<RunHead> {
    return this.#read("runHead", () => readRunHead(this.#state, request));
  }

  fork(request: ForkRequest): Promise<AppendResult> {
    return this.#gate.run("fork", () => forkRun(this.#state, request));
  }

  putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    return this.#gate.run("putBlob", async () => {
      const sessionId = putBlobSession(options);
      const [ref] = await putEncodedBlobs(this.#state, [prepareBlob(content)], sessionId);
      return ref as string;
    });
  }

  putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    return this.#gate.run("putBlobs", async () => {
      const sessionId = putBlobSession(options);
      return putEncodedBlobs(this.#state, prepareBlobs(contents), sessionId);
    });
  }

  getBlob(ref: string): Promise<Uint8Array> {
    return this.#read("getBlob", () => readStoredBlob(this.#state, ref));
  }

  getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return this.#read("getBlobs", () => readStoredBlobs(this.#state, refs));
  }

  /**
   * Retention (§4): refuses an open run (or, with `eventCount`, a session written since), deletes
   * the session's keys with DELETE_SESSION_SCRIPT (one slot), takes it out of the sessions index,
   * then deletes each blob it referenced with COLLECT_BLOB_SCRIPT (no other session, older than
   * the grace), each in its own slot.
   *
   * The script deletes only the session this call read: an append that lands in between (a new
   * run: closed runs refuse appends) makes it delete nothing and look again, so an
   * acknowledged append is never deleted with the session. The look again finds the new run
   * open and refuses. The index lives in another slot, so it cannot be in the script. It goes
   * after the keys: a process that dies in between leaves an index entry of no session, which
   * listSessions skips (a small leak), where taking it out first left a session whole that no
   * listing finds and nothing would ever delete. See delete-session.ts.
   */
  deleteSession(
    sessionId: string,
    options: DeleteSessionOptions = {},
  ): Promise<DeleteSessionResult> {
    return this.#gate.run("deleteSession", () =>
      deleteStoredSession(this.#state, sessionId, options),
    );
  }

  /**
   * Retention across the store (§4): every blob under the prefix put before the grace that no
   * existing session references goes, with its session set (collect-blobs.ts says how, and why
   * it is safe while other sessions are written, also on a Cluster). The options are checked
   * before anything is read.
   */
  collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    return this.#gate.run("collectBlobs", async () => {
      const graceMs = blobGraceMs(options);
      const dryRun = collectDryRun(options);
      const asIfDeleted = new Set(collectAsIfDeleted(options, dryRun));
      const signal = stopSignal(options?.signal);
      try {
        const { found, stopped } = await collectOrphanBlobs(
          this.#state.client,
          this.#state.prefix,
          {
            graceMs,
            batchSize: BLOBS_PER_ROUND_TRIP,
            signal,
            dryRun,
            asIfDeleted,
          },
        );
        return collectResult(dryRun, found, stopped);
      } catch (error) {
        throw unavailable(error, "collectBlobs", this.#state.client);
      }
    });
  }

  /**
   * A read through the closing gate, sent again when the connection it went on closed under it
   * (retryRead; client.ts's lostConnection tells such a failure).
   */
  #read<T>(operation: string, read: () => Promise<T>): Promise<T> {
    return this.#gate.run(operation, () =>
      retryRead({
        read,
        lostConnection: (error) => lostConnection(error, this.#state.client),
        closing: () => this.#gate.closing,
      }),
    );
  }

  describe(): StoreDescription {
    return { kind: "redis", location: this.#location, durability: { ...this.#durability } };
  }

  /** See ClosingGate: a client the application gave stays open. */
  close(): Promise<void> {
    return this.#gate.close(async () => {
      this.#state.heads.clear();
      if (!this.#owned) return;
      try {
        await this.#state.client.quit();
      } catch {
        // Already closed or unreachable: there is nothing left to flush.
        this.#state.client.disconnect();
      }
    });
  }
}
