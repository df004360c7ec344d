import { type Cluster, type Redis, ReplyError } from "ioredis";
import { isoNow } from "../../events/clock.js";
import {
  ConflictError,
  InvalidArgumentError,
  NotFoundError,
  noLedgerError,
  StoreUnavailableError,
} from "../../events/errors.js";
import { assertId, uuidv7 } from "../../events/ids.js";
import type { LedgerEvent, RunHead } from "../../events/types.js";
import {
  type AppendPlan,
  assignCursors,
  EMPTY_HEAD,
  planAppend,
  planFork,
} from "../../store/append-plan.js";
import {
  bufferOf,
  type EncodedBlob,
  prepareBlob,
  prepareBlobs,
  putBlobSession,
  readBlob,
  readBlobs,
} from "../../store/blob.js";
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
  SessionSummary,
  StoreDescription,
} from "../../store/event-store.js";
import { assertParsableUrl, takeUrlParam, withUrlParam } from "../../store/open-store.js";
import { redactUrl } from "../../store/redact-url.js";
import {
  blobGraceMs,
  openRunError,
  refsOf,
  retentionGraceMs,
  sessionNotFound,
} from "../../store/retention.js";
import {
  assertRunAddress,
  assertSessionAddress,
  type ValidAppend,
  validateAppend,
  validateFork,
  validatePaging,
} from "../../store/validate.js";
import { WriteCoalescer } from "../../store/write-coalescer.js";
import {
  type AppendAddress,
  type AppendCall,
  appendScriptCall,
  type PlannedWrite,
  type ScriptBlobs,
} from "./append-call.js";
import {
  assertKnownUrlParams,
  assertReadsFromMasters,
  assertSelectedDatabase,
  assertServerVersion,
  clientKeyPrefix,
  createClient,
  describeClient,
  evictsLedgerKeys,
  isCluster,
  readDurability,
  unavailable,
  unknownDurability,
} from "./client.js";
import { decodeEvent, decodeHead, decodePairs, decodeSnapshot, type Snapshot } from "./codec.js";
import { collectOrphanBlobs } from "./collect-blobs.js";
import {
  blobKeys,
  blobScriptKeys,
  idField,
  idFromField,
  type RunKeys,
  runKeys,
  runKeysByHash,
  type SessionKeys,
  schemaKey,
  sessionFromMember,
  sessionKeys,
  sessionMember,
  sessionsKey,
} from "./keys.js";
import { migrateBlobsFromLayout1, migrateSessionIndexFromLayout2 } from "./layout-migration.js";
import { logRefs } from "./log-refs.js";
import {
  APPEND_BATCH_SCRIPT,
  APPEND_SCRIPT,
  COLLECT_BLOB_SCRIPT,
  DELETE_SESSION_SCRIPT,
  PUT_BLOB_SCRIPT,
  READ_RUN_SCRIPT,
  runScript,
} from "./scripts.js";

/**
 * Version of the key layout (keys.ts); init() moves a layout-1 database to it
 * (layout-migration.ts) and refuses any other.
 */
const LAYOUT_VERSION = "3";
/** Script round trips one append may take when other writers move the run in between. */
const MAX_ATTEMPTS = 4;
/** Blob scripts retention sends before it waits for their replies. */
const BLOBS_PER_ROUND_TRIP = 500;
/**
 * Stored blob bytes one batch script call carries at most: appends whose blobs together pass it
 * go in script calls of their own. A script holds the server for its whole run, and a call is
 * one command that the server reads whole before it runs it.
 */
const BLOB_BYTES_PER_SCRIPT = 16 * 1024 * 1024;
/** Run heads remembered from this store's own appends (saves the read before a write). */
const HEAD_CACHE_SIZE = 10_000;

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
}

type WriteOutcome =
  | { kind: "written"; events: LedgerEvent[]; listed: boolean }
  | { kind: "refused"; snapshot: Snapshot };

/**
 * The ledger on Redis (§4). Each append is one Lua script that checks and writes atomically;
 * every key of a session shares the session's hash tag, so the store works on Redis Cluster.
 * Durability is the server's setting (appendonly, appendfsync): `describe()` reports it.
 */
export class RedisEventStore implements EventStore {
  readonly #client: Redis | Cluster;
  readonly #owned: boolean;
  readonly #prefix: string;
  readonly #location: string;
  readonly #heads = new Map<string, RunHead>();
  /**
   * Group commit: while append scripts run, the appends that arrive wait for the end of the
   * tick and go out together in one script call, at most two calls at once, each with at most
   * half of what is running and waiting (`balanced`: while Redis runs one call, the writers of
   * the other prepare their next appends). On one server the appends of every session share the
   * calls; on a Cluster only a session's own do (a script's keys must share a slot), and other
   * sessions never wait. Measured with 8 writers, against 8 raw writers in the same process
   * (bench/README.md): 0.49-0.54x with a call per session's appends, 0.67x so.
   */
  readonly #scripts: WriteCoalescer<AppendCall, unknown[] | Error>;
  readonly #keys = new Map<string, { session: SessionKeys; run: RunKeys }>();
  #durability: Record<string, string> = unknownDurability();

  constructor(options: RedisEventStoreOptions) {
    if ((options.client === undefined) === (options.url === undefined)) {
      throw new InvalidArgumentError("$", "RedisEventStore needs exactly one of client or url");
    }
    let url = options.url;
    let prefixFromUrl: string | undefined;
    if (url !== undefined && /^rediss?:\/\//i.test(url)) {
      // `?keyPrefix=` in the URL (for openStore, which takes only a URL) is ours, not ioredis'
      // (whose own keyPrefix option would prefix every key a second time).
      const parsed = assertParsableUrl("$.url", url);
      assertKnownUrlParams(parsed);
      prefixFromUrl = takeUrlParam(parsed, "keyPrefix");
      if (prefixFromUrl !== undefined) url = parsed.toString();
    }
    const prefix = options.keyPrefix ?? prefixFromUrl ?? "agent-ledger:";
    if (typeof prefix !== "string" || /[{}]/.test(prefix)) {
      // A brace in the prefix would become (part of) the Cluster hash tag of every key.
      throw new InvalidArgumentError("$.keyPrefix", "keyPrefix must be a string without { or }");
    }
    this.#prefix = prefix;
    if (url !== undefined) {
      if (!/^rediss?:\/\//i.test(url)) {
        throw new InvalidArgumentError("$.url", "a Redis URL starts with redis:// or rediss://");
      }
      this.#client = createClient(url);
      this.#owned = true;
      this.#location = withUrlParam(redactUrl(url), "keyPrefix", prefix);
    } else {
      assertReadsFromMasters(options.client as Redis | Cluster);
      this.#client = options.client as Redis | Cluster;
      this.#owned = false;
      // An application's client may prefix every key itself (ioredis' keyPrefix): the keys
      // are under both, and a URL that finds them names both as its keyPrefix.
      this.#location = withUrlParam(
        describeClient(this.#client),
        "keyPrefix",
        clientKeyPrefix(this.#client) + prefix,
      );
    }
    this.#scripts = new WriteCoalescer((calls) => this.#runAppendScripts(calls), {
      key: isCluster(this.#client) ? (call) => call.keys[0] as string : () => "",
      maxInFlight: 2,
      maxBatch: 64,
      balanced: true,
    });
  }

  /** A store on its own client for `redis://` or `rediss://` URLs (openStore calls init). */
  static fromUrl(url: string): EventStore {
    return new RedisEventStore({ url });
  }

  /** A driver failure of `what` as `store-unavailable`, with the client's last connection error. */
  #unavailable(error: unknown, what: string): unknown {
    return unavailable(error, what, this.#client);
  }

  async init(options?: InitOptions): Promise<void> {
    try {
      await assertServerVersion(this.#client);
      await assertSelectedDatabase(this.#client);
      // Before anything is written: a server that may evict the ledger's keys is refused.
      const durability = await readDurability(this.#client);
      const evicts = evictsLedgerKeys(durability);
      if (evicts !== undefined) throw new StoreUnavailableError(evicts);
      const key = schemaKey(this.#prefix);
      let version = await this.#client.get(key);
      if (version === null && options?.create === false)
        throw noLedgerError(
          this.#location,
          `no agent-ledger keys under ${JSON.stringify(this.#prefix)}`,
        );
      // Written only where it is missing: a user that may only read (an on-call person's
      // ACL) opens a ledger at this layout too.
      if (version === null) {
        await this.#client.set(key, LAYOUT_VERSION, "NX");
        version = await this.#client.get(key);
      }
      // Each step is idempotent, and the version is written once, at the end: a process that
      // finished while another was still moving keys is never set back to an older layout.
      if (version === "1" || version === "2") {
        if (version === "1") await migrateBlobsFromLayout1(this.#client, this.#prefix);
        await migrateSessionIndexFromLayout2(this.#client, this.#prefix);
        await this.#client.set(key, LAYOUT_VERSION);
        version = LAYOUT_VERSION;
      }
      if (version !== LAYOUT_VERSION) {
        throw new StoreUnavailableError(
          `redis keys under ${JSON.stringify(this.#prefix)} use layout version ${version}; this version of agent-ledger reads version ${LAYOUT_VERSION}`,
        );
      }
      this.#durability = durability;
    } catch (error) {
      throw this.#unavailable(error, "init");
    }
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    const valid = validateAppend(request);
    const { session, run } = this.#keysOf(valid.sessionId, valid.runId);
    try {
      const blobs = this.#scriptBlobs(valid);
      // A Cluster holds the blob keys on other nodes, out of the script's reach: there the
      // blobs it carries are put (claimed by the session) and the blobs its events name are
      // indexed first, and a put or an index that failed fails the call before the append.
      // On one server the script stores them itself, only if it writes the events.
      if (blobs !== undefined && isCluster(this.#client)) {
        const [stored] = await Promise.all([
          this.#storeBlobs(blobs.carried, valid.sessionId),
          this.#indexRefs(valid.sessionId, blobs.named),
        ]);
        // The session's list of the blobs put for it goes after their scripts (#listPuts), in
        // the same round trip as the append's script: not one more.
        const [result] = await Promise.all([
          this.#appendThroughScript(valid, session, run, undefined),
          this.#listPuts(stored, valid.sessionId),
        ]);
        return result;
      }
      return await this.#appendThroughScript(valid, session, run, blobs);
    } catch (error) {
      this.#heads.delete(run.head);
      throw this.#unavailable(error, "append");
    }
  }

  /** The blobs an append carries (each once) and the others its events name, if any. */
  #scriptBlobs(valid: ValidAppend): ScriptBlobs | undefined {
    let named = refsOf(valid.events);
    if (valid.blobs.length === 0) {
      return named.length === 0 ? undefined : { prefix: this.#prefix, carried: [], named };
    }
    const carried = [...new Map(valid.blobs.map((blob) => [blob.ref, blob])).values()];
    const refs = new Set(carried.map((blob) => blob.ref));
    named = named.filter((ref) => !refs.has(ref));
    return { prefix: this.#prefix, carried, named };
  }

  /**
   * The blobs of an append stored outside its script, as `putBlobs` puts them and with the
   * reference index of the others it names: on a Cluster, and for a retry found already
   * written (`deduplicated`).
   */
  async #putAndIndex(sessionId: string, blobs: ScriptBlobs): Promise<void> {
    await Promise.all([
      this.#putBlobs(blobs.carried, sessionId),
      this.#indexRefs(sessionId, blobs.named),
    ]);
  }

  /**
   * The append's script, with the blobs it stores (`blobs`: on one server) or none (on a
   * Cluster, where they were stored first).
   */
  async #appendThroughScript(
    valid: ValidAppend,
    session: SessionKeys,
    run: RunKeys,
    blobs: ScriptBlobs | undefined,
  ): Promise<AppendResult> {
    // The hash chain needs sha256, which Lua lacks: plan in JS from a head we believe in,
    // and let the script check that the head is still that one before it writes.
    const cached = this.#heads.get(run.head);
    let snapshot: Snapshot | undefined =
      cached !== undefined && cached.length === valid.expectedSeq && cached.status === "running"
        ? { head: cached, existing: [] }
        : valid.expectedSeq === 0
          ? { head: EMPTY_HEAD, existing: [] }
          : undefined;
    for (let attempt = 1; ; attempt++) {
      if (snapshot === undefined) {
        const reply = await this.#appendScript(session, run, "read", valid, undefined);
        snapshot = decodeSnapshot(reply);
      }
      const plan = planAppend({
        request: valid,
        head: snapshot.head,
        existing: snapshot.existing,
        now: isoNow(),
      });
      if (plan.kind === "deduplicated") {
        // The first try may have committed and then lost its connection before listing the
        // session: a retry is the only call left to list it.
        await this.#listIfUnlisted(session, valid.sessionId);
        // The first try stored its blobs with its events, unless an earlier version of the
        // store wrote it (it put them ahead of its script, and that put could fail alone).
        if (blobs !== undefined) await this.#putAndIndex(valid.sessionId, blobs);
        return { events: plan.events, deduplicated: true };
      }
      const outcome = await this.#write(session, run, valid, plan, snapshot.head, blobs);
      if (outcome.kind === "written") {
        this.#rememberHead(run.head, plan.head);
        if (!outcome.listed) await this.#list(session, valid.sessionId);
        return { events: outcome.events, deduplicated: false };
      }
      // Refused: another writer moved the run (or wrote one of these ids) between our view
      // and the script. Plan again on the script's own view: that yields the right answer
      // (deduplicated, duplicate-event, run-closed, conflict), or a write if only our
      // cached head was stale while the caller's expectedSeq is right.
      this.#heads.delete(run.head);
      snapshot = outcome.snapshot;
      if (attempt >= MAX_ATTEMPTS) {
        throw new ConflictError({
          sessionId: valid.sessionId,
          runId: valid.runId,
          expectedSeq: valid.expectedSeq,
          actualSeq: snapshot.head.length,
        });
      }
    }
  }

  async #write(
    session: SessionKeys,
    run: RunKeys,
    address: AppendAddress,
    plan: Extract<AppendPlan, { kind: "write" }>,
    head: RunHead,
    blobs?: ScriptBlobs,
  ): Promise<WriteOutcome> {
    const reply = await this.#appendScript(
      session,
      run,
      "write",
      address,
      {
        events: plan.events,
        expectedLength: head.length,
        expectedLastHash: head.lastHash,
        newHead: plan.head,
      },
      blobs,
    );
    if (reply[0] !== "ok") return { kind: "refused", snapshot: decodeSnapshot(reply) };
    return {
      kind: "written",
      events: assignCursors(plan.events, Number(reply[1])),
      listed: Number(reply[2]) === 1,
    };
  }

  async #appendScript(
    session: SessionKeys,
    run: RunKeys,
    mode: "read" | "write",
    address: AppendAddress,
    write: PlannedWrite | undefined,
    blobs?: ScriptBlobs,
  ): Promise<unknown[]> {
    const reply = await this.#scripts.submit(
      appendScriptCall(session, run, mode, address, write, blobs),
    );
    if (reply instanceof Error) throw reply;
    return reply;
  }

  async #runAppendScripts(calls: AppendCall[]): Promise<(unknown[] | Error)[]> {
    const [only] = calls;
    if (calls.length === 1 && only !== undefined)
      return [(await runScript(this.#client, APPEND_SCRIPT, only.keys, only.args)) as unknown[]];
    let blobBytes = 0;
    for (const call of calls) blobBytes += call.blobBytes;
    if (blobBytes > BLOB_BYTES_PER_SCRIPT) return this.#eachAlone(calls);
    const args: (string | number | Buffer)[] = [calls.length];
    for (const call of calls) {
      args.push(call.args.length);
      for (const arg of call.args) args.push(arg);
    }
    try {
      return (await runScript(
        this.#client,
        APPEND_BATCH_SCRIPT,
        calls.flatMap((call) => call.keys),
        args,
      )) as unknown[][];
    } catch (error) {
      // The server refused the script (a key of one session holding another type, say): the
      // call fails whole, so each append runs again alone and only the one at fault fails.
      // Those the failed call wrote before the error are found stored, and answered so.
      if (!(error instanceof ReplyError)) throw error;
      return this.#eachAlone(calls);
    }
  }

  /** Each call in a script call of its own (sent at once), answered with its reply or error. */
  #eachAlone(calls: AppendCall[]): Promise<(unknown[] | Error)[]> {
    return Promise.all(
      calls.map((call) =>
        runScript(this.#client, APPEND_SCRIPT, call.keys, call.args).then(
          (reply) => reply as unknown[],
          (failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))),
        ),
      ),
    );
  }

  /**
   * Key names of a (session, run), memoized: they cost two sha256 digests and a few strings,
   * and a recorder appends to the same run over and over.
   */
  #keysOf(sessionId: string, runId: string): { session: SessionKeys; run: RunKeys } {
    const id = `${sessionId}\n${runId}`;
    let keys = this.#keys.get(id);
    if (keys === undefined) {
      keys = {
        session: sessionKeys(this.#prefix, sessionId),
        run: runKeys(this.#prefix, sessionId, runId),
      };
      this.#keys.set(id, keys);
      if (this.#keys.size > HEAD_CACHE_SIZE) {
        const oldest = this.#keys.keys().next().value;
        if (oldest !== undefined) this.#keys.delete(oldest);
      }
    }
    return keys;
  }

  #rememberHead(key: string, head: RunHead): void {
    this.#heads.delete(key);
    this.#heads.set(key, head);
    if (this.#heads.size > HEAD_CACHE_SIZE) {
      const oldest = this.#heads.keys().next().value;
      if (oldest !== undefined) this.#heads.delete(oldest);
    }
  }

  /**
   * Adds the session to the global index for listSessions. That key lives outside the
   * session's hash slot (on a Cluster, on another node), so the append script cannot write it;
   * it is written here, after the script succeeded, with an idempotent ZADD, and the session's
   * `listed` flag is set only afterwards. If the process dies in between, the script reports
   * `listed = 0` on the session's next append and this runs again.
   */
  async #list(session: SessionKeys, sessionId: string): Promise<void> {
    await this.#client.zadd(sessionsKey(this.#prefix), 0, sessionMember(sessionId));
    await this.#client.hset(session.meta, "listed", "1");
  }

  async #listIfUnlisted(session: SessionKeys, sessionId: string): Promise<void> {
    if ((await this.#client.hget(session.meta, "listed")) !== "1")
      await this.#list(session, sessionId);
  }

  async readRun(request: ReadRunRequest): Promise<EventPage> {
    assertRunAddress(request);
    validatePaging(request, { fromSeq: request.fromSeq });
    const from = request.fromSeq ?? 0;
    const events = await this.#readRunSlice(request.sessionId, request.runId, from, request.limit);
    return { events, nextCursor: from + events.length };
  }

  async #readRunSlice(
    sessionId: string,
    runId: string,
    from: number,
    limit: number | undefined,
  ): Promise<LedgerEvent[]> {
    const session = sessionKeys(this.#prefix, sessionId);
    const run = runKeys(this.#prefix, sessionId, runId);
    const to = limit === undefined ? -1 : from + limit - 1;
    try {
      const reply = (await runScript(
        this.#client,
        READ_RUN_SCRIPT,
        [run.events, session.log],
        [from, to],
      )) as unknown[];
      return decodePairs(reply);
    } catch (error) {
      throw this.#unavailable(error, "readRun");
    }
  }

  async readSession(request: ReadSessionRequest): Promise<EventPage> {
    assertSessionAddress(request);
    validatePaging(request, { after: request.after });
    const after = request.after ?? 0;
    const to = request.limit === undefined ? -1 : after + request.limit - 1;
    const session = sessionKeys(this.#prefix, request.sessionId);
    try {
      // The log's index i holds cursor i + 1, and the script appends to it and bumps the
      // counter in one step: a page never has a gap that a later commit could fill.
      const jsons = await this.#client.lrange(session.log, after, to);
      const events = jsons.map((json, index) => decodeEvent(json, after + index + 1));
      return { events, nextCursor: after + events.length };
    } catch (error) {
      throw this.#unavailable(error, "readSession");
    }
  }

  async listRuns(sessionId: string): Promise<RunSummary[]> {
    assertId(sessionId, "$.sessionId");
    const session = sessionKeys(this.#prefix, sessionId);
    try {
      const hashes = await this.#client.lrange(session.runs, 0, -1);
      // Separate commands rather than a pipeline: they pipeline on the wire all the same, and
      // an ioredis Cluster pipeline would need them in one slot (they are, but stay portable).
      const heads = await Promise.all(
        hashes.map((hash) =>
          this.#client.hmget(
            runKeysByHash(this.#prefix, sessionId, hash).head,
            "runId",
            "parentRunId",
            "length",
            "status",
            "lastHash",
            "startedAt",
          ),
        ),
      );
      const summaries: RunSummary[] = [];
      for (const [runId, parentRunId, length, status, lastHash, startedAt] of heads) {
        // A head is written with its run id when the run is made: one missing was deleted
        // (deleteSession) between the two reads, and so was its run.
        if (!runId) continue;
        const head = decodeHead([length ?? null, status ?? null, lastHash ?? null]);
        const summary: RunSummary = {
          runId: idFromField(runId),
          length: head.length,
          status: head.status,
          lastHash: head.lastHash,
          startedAt: startedAt ?? "",
        };
        if (parentRunId) summary.parentRunId = idFromField(parentRunId);
        summaries.push(summary);
      }
      return summaries;
    } catch (error) {
      throw this.#unavailable(error, "listRuns");
    }
  }

  /**
   * The index can name a session that has no events: an append's ZADD can land after a
   * `deleteSession` that ran between it and the append's script (the index lives outside the
   * session's slot, so no script can write both). Such a member is skipped, not removed: a
   * removal could race the session's next first append and unlist a session that has events.
   * A page skips them and reads on until it has its `limit` sessions, or the index ends.
   */
  async listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    validatePaging(request);
    if (request.after !== undefined) assertId(request.after, "$.after");
    // One more than the page, to know whether another page follows.
    const wanted = request.limit === undefined ? Number.POSITIVE_INFINITY : request.limit + 1;
    const found: SessionSummary[] = [];
    let start: string | Buffer =
      request.after === undefined
        ? "-"
        : Buffer.concat([Buffer.from("("), sessionMember(request.after)]);
    try {
      while (found.length < wanted) {
        const asked = wanted - found.length;
        const members = Number.isFinite(asked)
          ? await this.#client.zrangebylexBuffer(
              sessionsKey(this.#prefix),
              start,
              "+",
              "LIMIT",
              0,
              asked,
            )
          : await this.#client.zrangebylexBuffer(sessionsKey(this.#prefix), start, "+");
        const last = members[members.length - 1];
        if (last === undefined) break;
        const ids = members.map(sessionFromMember);
        const metas = await Promise.all(
          ids.map((sessionId) =>
            this.#client.hmget(
              sessionKeys(this.#prefix, sessionId).meta,
              "cursor",
              "createdAt",
              "updatedAt",
            ),
          ),
        );
        ids.forEach((sessionId, index) => {
          const [cursor, createdAt, updatedAt] = metas[index] ?? [];
          if (cursor === null || cursor === undefined) return;
          found.push({
            sessionId,
            eventCount: Number(cursor),
            createdAt: createdAt ?? "",
            updatedAt: updatedAt ?? "",
          });
        });
        if (members.length < asked) break;
        start = Buffer.concat([Buffer.from("("), last]);
      }
    } catch (error) {
      throw this.#unavailable(error, "listSessions");
    }
    const sessions = request.limit === undefined ? found : found.slice(0, request.limit);
    const page: SessionPage = { sessions };
    const last = sessions[sessions.length - 1];
    if (found.length > sessions.length && last !== undefined) page.nextCursor = last.sessionId;
    return page;
  }

  async runHead(request: { sessionId: string; runId: string }): Promise<RunHead> {
    assertRunAddress(request);
    const run = runKeys(this.#prefix, request.sessionId, request.runId);
    try {
      return decodeHead(await this.#client.hmget(run.head, "length", "status", "lastHash"));
    } catch (error) {
      throw this.#unavailable(error, "runHead");
    }
  }

  async fork(request: ForkRequest): Promise<AppendResult> {
    validateFork(request);
    const source = await this.runHead({ sessionId: request.sessionId, runId: request.runId });
    if (!source.exists)
      throw new NotFoundError(`run ${request.runId} not found in session ${request.sessionId}`);
    if (request.uptoSeq > source.length) {
      throw new NotFoundError(
        `run ${request.runId} has ${source.length} events; cannot fork up to ${request.uptoSeq}`,
      );
    }
    // A run's events never change once written, so the prefix read here stays valid.
    const prefix = await this.#readRunSlice(request.sessionId, request.runId, 0, request.uptoSeq);
    const session = sessionKeys(this.#prefix, request.sessionId);
    const target = runKeys(this.#prefix, request.sessionId, request.newRunId);
    try {
      const plan = planFork({
        sessionId: request.sessionId,
        newRunId: request.newRunId,
        source: prefix,
        newEventId: uuidv7,
        now: isoNow(),
      });
      const outcome = await this.#write(
        session,
        target,
        { sessionId: request.sessionId, runId: request.newRunId, events: plan.events },
        { kind: "write", events: plan.events, head: plan.head },
        EMPTY_HEAD,
      );
      if (outcome.kind === "refused") {
        throw new ConflictError({
          sessionId: request.sessionId,
          runId: request.newRunId,
          expectedSeq: 0,
          actualSeq: outcome.snapshot.head.length,
        });
      }
      this.#rememberHead(target.head, plan.head);
      if (!outcome.listed) await this.#list(session, request.sessionId);
      return { events: outcome.events, deduplicated: false };
    } catch (error) {
      throw this.#unavailable(error, "fork");
    }
  }

  /**
   * The blob reference index, written BEFORE the append script on a Cluster: there the blob
   * keys live on other nodes, out of the script's reach (on one server the script writes it).
   * Indexing first errs on the safe side: a failed append leaves a reference that only keeps a
   * blob longer, while its session exists (collectBlobs removes the claims of gone sessions,
   * also where no blob is left).
   */
  async #indexRefs(sessionId: string, refs: string[]): Promise<void> {
    if (refs.length === 0) return;
    const member = idField(sessionId);
    await Promise.all(
      refs.map((ref) => this.#client.sadd(blobKeys(this.#prefix, ref.slice(7)).sessions, member)),
    );
  }

  async putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    const sessionId = putBlobSession(options);
    const [ref] = await this.#putBlobs([prepareBlob(content)], sessionId);
    return ref as string;
  }

  async putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    const sessionId = putBlobSession(options);
    return this.#putBlobs(prepareBlobs(contents), sessionId);
  }

  async #putBlobs(blobs: EncodedBlob[], sessionId: string | undefined): Promise<string[]> {
    if (blobs.length === 0) return [];
    const unique = await this.#storeBlobs(blobs, sessionId);
    await this.#listPuts(unique, sessionId);
    return blobs.map((blob) => blob.ref);
  }

  /**
   * Per blob, one script in the blob's slot: the session's claim, SET NX and the touched-at
   * time together, so retention sees all or none; on one server also the blob's entry in the
   * session's list of what was put for it (its `puts` set), which its deletion collects even if
   * no event of it ever names them. Returns the blobs, each once.
   */
  async #storeBlobs(blobs: EncodedBlob[], sessionId: string | undefined): Promise<EncodedBlob[]> {
    const member = sessionId === undefined ? "" : idField(sessionId);
    // Each blob once (the same content twice in a batch is one put).
    const unique = [...new Map(blobs.map((blob) => [blob.ref, blob])).values()];
    const puts =
      sessionId === undefined || isCluster(this.#client)
        ? []
        : [sessionKeys(this.#prefix, sessionId).puts];
    try {
      await Promise.all(
        unique.map((blob) =>
          runScript(
            this.#client,
            PUT_BLOB_SCRIPT,
            [...blobScriptKeys(this.#prefix, blob.ref.slice(7)), ...puts],
            [bufferOf(blob.stored), member, blob.ref],
          ),
        ),
      );
    } catch (error) {
      throw this.#unavailable(error, "putBlob");
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
  async #listPuts(blobs: EncodedBlob[], sessionId: string | undefined): Promise<void> {
    if (sessionId === undefined || !isCluster(this.#client) || blobs.length === 0) return;
    try {
      await this.#client.sadd(
        sessionKeys(this.#prefix, sessionId).puts,
        ...blobs.map((blob) => blob.ref),
      );
    } catch (error) {
      throw this.#unavailable(error, "putBlob");
    }
  }

  async getBlob(ref: string): Promise<Uint8Array> {
    return readBlob(ref, async (known) => {
      try {
        return await this.#client.getBuffer(blobKeys(this.#prefix, known.slice(7)).content);
      } catch (error) {
        throw this.#unavailable(error, "getBlob");
      }
    });
  }

  async getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(refs, async (unique) => {
      let values: (Buffer | null)[];
      try {
        // One command per key (pipelined on the wire): blob keys are in different Cluster slots.
        values = await Promise.all(
          unique.map((ref) => this.#client.getBuffer(blobKeys(this.#prefix, ref.slice(7)).content)),
        );
      } catch (error) {
        throw this.#unavailable(error, "getBlobs");
      }
      const found = new Map<string, Uint8Array>();
      unique.forEach((ref, index) => {
        const value = values[index];
        if (value) found.set(ref, value);
      });
      return found;
    });
  }

  /**
   * Retention (§4): refuses an open run, takes the session out of the sessions index, deletes
   * the session's keys with DELETE_SESSION_SCRIPT (one slot), then each blob it referenced with
   * COLLECT_BLOB_SCRIPT (no other session, older than the grace), each in its own slot.
   *
   * The script deletes only the session this call read: an append that lands in between (a new
   * run: closed runs refuse appends) makes it delete nothing and look again, so an
   * acknowledged append is never deleted with the session. The look again finds the new run
   * open and refuses. The index lives in another slot, so it cannot be in the script. It goes
   * first, after the session's `listed` flag: a process that dies before the script leaves the
   * session whole and unlisted, and both a retried deleteSession and a new append to the
   * session (which then lists it again) find it. Deleting the keys first could strand an index
   * entry that no call would ever clean.
   */
  async deleteSession(
    sessionId: string,
    options: DeleteSessionOptions = {},
  ): Promise<DeleteSessionResult> {
    const graceMs = retentionGraceMs(sessionId, options);
    for (let attempt = 1; ; attempt++) {
      const runs = await this.listRuns(sessionId);
      if (runs.length === 0) throw sessionNotFound(sessionId);
      const open = runs.find((run) => run.status === "running");
      if (open) throw openRunError(sessionId, open.runId);
      const deleted = await this.#deleteSessionKeys(sessionId, runs);
      if (deleted !== undefined) return this.#collectSessionBlobs(sessionId, deleted, graceMs);
      if (attempt >= MAX_ATTEMPTS)
        throw new StoreUnavailableError(
          `deleteSession ${sessionId}: the session kept changing while it was being deleted`,
        );
    }
  }

  /**
   * The session's keys deleted as `runs` (listed just before) and its log show them, or undefined
   * when the script finds either changed since.
   */
  async #deleteSessionKeys(
    sessionId: string,
    listed: RunSummary[],
  ): Promise<{ events: number; refs: string[]; runs: number } | undefined> {
    const session = sessionKeys(this.#prefix, sessionId);
    const runs = listed.map((run) => runKeys(this.#prefix, sessionId, run.runId));
    try {
      const logged = await logRefs(this.#client, session.log);
      const { events } = logged;
      const refs = [...new Set([...logged.refs, ...(await this.#client.smembers(session.puts))])];
      await this.#client.hdel(session.meta, "listed");
      await this.#client.zrem(sessionsKey(this.#prefix), sessionMember(sessionId));
      const done = await runScript(
        this.#client,
        DELETE_SESSION_SCRIPT,
        [
          session.meta,
          session.log,
          session.ids,
          session.runs,
          ...runs.flatMap((run) => [run.events, run.head]),
          session.puts,
        ],
        [events, ...runs.map((run) => run.runHash)],
      );
      if (Number(done) === 0) {
        // Changed, not deleted: the script marked it listed again; the index entry goes back.
        await this.#client.zadd(sessionsKey(this.#prefix), 0, sessionMember(sessionId));
        return undefined;
      }
      // Gone: another deleteSession was first (the next look finds nothing).
      if (Number(done) === 2) return undefined;
      for (const run of runs) this.#heads.delete(run.head);
      return { events, refs, runs: runs.length };
    } catch (error) {
      throw this.#unavailable(error, "deleteSession");
    }
  }

  /** After the session's keys are gone: its blobs no other session references, collected. */
  async #collectSessionBlobs(
    sessionId: string,
    deleted: { events: number; refs: string[]; runs: number },
    graceMs: number,
  ): Promise<DeleteSessionResult> {
    const { refs } = deleted;
    const member = idField(sessionId);
    let deletedBlobs = 0;
    try {
      // One script per blob (its keys carry the blob's own hash tag: a Cluster routes each to
      // its slot), sent a page at a time without waiting in between: one round trip per page,
      // not per blob.
      for (let at = 0; at < refs.length; at += BLOBS_PER_ROUND_TRIP) {
        const collected = await Promise.all(
          refs.slice(at, at + BLOBS_PER_ROUND_TRIP).map((ref) => {
            return runScript(
              this.#client,
              COLLECT_BLOB_SCRIPT,
              blobScriptKeys(this.#prefix, ref.slice(7)),
              [member, graceMs],
            );
          }),
        );
        for (const one of collected) deletedBlobs += Number(one);
      }
    } catch (error) {
      throw this.#unavailable(error, "deleteSession");
    }
    return {
      sessionId,
      deletedEvents: deleted.events,
      deletedRuns: deleted.runs,
      deletedBlobs,
      keptBlobs: refs.length - deletedBlobs,
    };
  }

  /**
   * Retention across the store (§4): every blob under the prefix put before the grace that no
   * existing session references goes, with its session set (collect-blobs.ts says how, and why
   * it is safe while other sessions are written, also on a Cluster). The options are checked
   * before anything is read.
   */
  async collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    const graceMs = blobGraceMs(options);
    try {
      return {
        deletedBlobs: await collectOrphanBlobs(
          this.#client,
          this.#prefix,
          graceMs,
          BLOBS_PER_ROUND_TRIP,
        ),
      };
    } catch (error) {
      throw this.#unavailable(error, "collectBlobs");
    }
  }

  describe(): StoreDescription {
    return { kind: "redis", location: this.#location, durability: { ...this.#durability } };
  }

  async close(): Promise<void> {
    this.#heads.clear();
    if (!this.#owned) return;
    try {
      await this.#client.quit();
    } catch {
      // Already closed or unreachable: there is nothing left to flush.
      this.#client.disconnect();
    }
  }
}
