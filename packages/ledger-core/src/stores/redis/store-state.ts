import type { Cluster, Redis } from "ioredis";
import type { RunHead } from "../../events/types.js";
import { WriteCoalescer } from "../../store/write-coalescer.js";
import { runAppendScripts } from "./append-batches.js";
import type { AppendCall } from "./append-call.js";
import { isCluster } from "./client.js";
import type { RunKeys, SessionKeys } from "./keys.js";

/**
 * What one store knows beyond its public face: its client and key prefix, the caches and the
 * group commit of its appends. `RedisEventStore` keeps it private and hands it to the functions
 * of each concept (append-events.ts, read-events.ts, put-blobs.ts, delete-session.ts...), as
 * `SessionRecorder` does with `RecorderState`: private `#fields` cannot be shared across files.
 */
export class RedisStoreState {
  readonly client: Redis | Cluster;
  readonly prefix: string;
  readonly heads = new Map<string, RunHead>();
  /**
   * Group commit: while append scripts run, the appends that arrive wait for the end of the
   * tick and go out together in one script call, at most two calls at once, each with at most
   * half of what is running and waiting (`balanced`: while Redis runs one call, the writers of
   * the other prepare their next appends). On one server the appends of every session share the
   * calls; on a Cluster only a session's own do (a script's keys must share a slot), and other
   * sessions never wait. Measured with 8 writers, against 8 raw writers in the same process
   * (bench/README.md): 0.49-0.54x with a call per session's appends, 0.67x so.
   */
  readonly scripts: WriteCoalescer<AppendCall, unknown[] | Error>;
  readonly keys = new Map<string, { session: SessionKeys; run: RunKeys }>();

  constructor(options: { client: Redis | Cluster; prefix: string }) {
    this.client = options.client;
    this.prefix = options.prefix;
    this.scripts = new WriteCoalescer((calls) => runAppendScripts(this, calls), {
      key: isCluster(this.client) ? (call) => call.keys[0] as string : () => "",
      maxInFlight: 2,
      maxBatch: 64,
      balanced: true,
    });
  }
}
