import type { HeadAppend } from "./head-cache.js";

/**
 * Group commit across runs (backends with `appendAtHeads`), per session: at most two statements
 * of one session run at once (the second is sent while the first holds the session's cursor
 * row), and the appends that arrive meanwhile go out together. Sessions never wait for each
 * other. Measured with 8 writers (bench/README.md): on one session, 1.3-1.7x the throughput of
 * a statement per append on PostgreSQL; on 8 sessions unchanged, where a store-wide limit lost
 * 5-10% by holding back statements that did not contend.
 */
export const groupCommit = {
  key: (append: HeadAppend) => append.sessionId,
  maxInFlight: 2,
  maxBatch: 64,
};

/**
 * Group commit across sessions (backends with `batchesAcrossSessions`): up to four statements
 * of the whole store run at once, each with at most a quarter of the appends running and
 * waiting (`balanced`), and the appends of any session that arrive on one turn of the event
 * loop go out together. Measured on MariaDB with 8 writers on 8 sessions (bench/README.md): a
 * statement per session's append spent more client and server CPU per event than the 8 raw
 * writers on this two-core machine (median ratio 0.59-0.61x); gathered across sessions,
 * 0.72-0.75x with up to eight statements; balanced over four, 0.75-0.83x against 0.60-0.73x
 * for eight unbalanced in the same processes. The price: a statement waits for the locks of
 * all its sessions, so an append to a session another process holds (a long `deleteSession`,
 * say) also holds back the appends that went out with it, until that lock is released or the
 * server's lock wait times out (then each is written on its own).
 */
export const groupCommitAcrossSessions = {
  key: () => "",
  maxInFlight: 4,
  maxBatch: 64,
  balanced: true,
};
