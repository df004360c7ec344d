import { createHash } from "node:crypto";

/** A Lua script run by EVALSHA, with EVAL as the fallback when the server lost it (NOSCRIPT). */
export interface LuaScript {
  readonly source: string;
  /** SHA1 of the source, as SCRIPT LOAD and EVALSHA name it. */
  readonly sha: string;
}

/**
 * Minimal client surface the scripts need (ioredis Redis and Cluster both have it). Keys and
 * arguments go as one array, which ioredis flattens: spread into the call, a batch of some
 * 60,000 events (two arguments each) overflowed the JavaScript stack.
 */
export interface ScriptClient {
  evalsha(
    sha: string,
    numKeys: number,
    keysAndArgs: (string | number | Buffer)[],
  ): Promise<unknown>;
  eval(
    script: string,
    numKeys: number,
    keysAndArgs: (string | number | Buffer)[],
  ): Promise<unknown>;
}

function script(source: string): LuaScript {
  // Redis names scripts by the SHA1 of their source (SCRIPT LOAD, EVALSHA).
  return { source, sha: createHash("sha1").update(source).digest("hex") };
}

/**
 * Runs a script by its SHA1 and falls back on EVAL (which also caches it on the server) when
 * the server answers NOSCRIPT, e.g. after a restart, a failover or SCRIPT FLUSH.
 */
export async function runScript(
  client: ScriptClient,
  lua: LuaScript,
  keys: string[],
  args: (string | number | Buffer)[],
): Promise<unknown> {
  // concat keeps a Buffer argument whole (a typed array is not spread into the list).
  const keysAndArgs = (keys as (string | number | Buffer)[]).concat(args);
  try {
    return await client.evalsha(lua.sha, keys.length, keysAndArgs);
  } catch (error) {
    if (error instanceof Error && error.message.startsWith("NOSCRIPT")) {
      return await client.eval(lua.source, keys.length, keysAndArgs);
    }
    throw error;
  }
}

/** Lua: now on the server's clock (TIME), in epoch ms. */
const SERVER_NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/**
 * Lua: `readLog(log, cursors, out)` adds `cursor, json` to `out` for each of `cursors` (log
 * positions, as the strings the scripts store) and returns it. The log is read a stretch at a
 * time: one LRANGE over ascending cursors less than 16 apart (a run written in batches, or
 * interleaved with a few others; a retried batch), picking the ones asked for. A LINDEX per event
 * walked the log from its nearer end every time: paging through a run of 200,000 events cost 21
 * times what 20,000 did. Included by the scripts that read events (APPEND_FUNCTION's snapshot,
 * READ_RUN_SCRIPT).
 */
const READ_LOG_FUNCTION = `
local function readLog(log, cursors, out)
  local i = 1
  while i <= #cursors do
    local first = tonumber(cursors[i])
    local j = i
    while j < #cursors do
      local step = tonumber(cursors[j + 1]) - tonumber(cursors[j])
      if step <= 0 or step >= 16 then break end
      j = j + 1
    end
    local jsons = redis.call('LRANGE', log, first - 1, tonumber(cursors[j]) - 1)
    for k = i, j do
      out[#out + 1] = cursors[k]
      out[#out + 1] = jsons[tonumber(cursors[k]) - first + 1]
    end
    i = j + 1
  end
  return out
end
`;

/**
 * The append script: every check and every write of one append (or fork), atomically.
 *
 * KEYS: 1 meta, 2 log, 3 ids, 4 runs, 5 run events, 6 run head, then 3 keys per blob the append
 * carries (its session set, content and touched-at time: blobScriptKeys), then the session set
 * of each other blob its events name, then (if it carries any) the session's set of refs put
 * for it.
 * ARGV: 1 mode ("read" or "write"), 2 n (batch size), 3 expected run length, 4 expected last
 * hash ("" for none), 5 run hash, 6 run id, 7 session id (also its member in blob session sets),
 * 8 now, 9 new status, 10 new last hash, 11 parent run id ("" for none), 12 b (blobs carried),
 * 13 r (other blobs named), then n event ids (ids as `idField` JSON strings), then (write) n
 * event JSON strings, then b stored blob contents, then their b refs.
 *
 * Returns `{"ok", firstCursor, listed}` after writing, or, writing nothing,
 * `{"snapshot", exists, length, status, lastHash, cursor1, json1, ...}`: the run head and the
 * stored events whose id is in the batch, one consistent view for `planAppend` to decide on
 * (deduplicated, duplicate-event, run-closed or conflict, in that order). "read" mode only
 * returns the snapshot. Checks come before the first write, so a refused append writes nothing,
 * its blobs included; the blobs are written before the events.
 *
 * The blob keys live in slots of their own, so only a store on one server passes any (b and r
 * are 0 on a Cluster, where the store puts and indexes them before the script). A carried blob
 * is written as PUT_BLOB_SCRIPT writes it (the session's claim, SET NX, the server's time) and
 * listed in the session's puts; a blob named only gets the session's claim (the reference
 * index collectBlobs reads).
 *
 * Written as a Lua function of (KEYS, ARGV), which the single and the batch script both call.
 */
const APPEND_FUNCTION = `${READ_LOG_FUNCTION}
local function append(KEYS, ARGV)
  local n = tonumber(ARGV[2])
  local idBase = 14
  local head = redis.call('HMGET', KEYS[6], 'length', 'status', 'lastHash')
  local function snapshot()
    local out = {'snapshot', head[1] and '1' or '0', head[1] or '0', head[2] or 'running', head[3] or ''}
    local cursors = {}
    for i = 1, n do
      local cursor = redis.call('HGET', KEYS[3], ARGV[idBase + i - 1])
      if cursor then cursors[#cursors + 1] = cursor end
    end
    return readLog(KEYS[2], cursors, out)
  end
  if ARGV[1] ~= 'write' then return snapshot() end
  local length = tonumber(head[1] or '0')
  if length ~= tonumber(ARGV[3]) or (head[3] or '') ~= ARGV[4] or (head[2] or 'running') ~= 'running' then
    return snapshot()
  end
  for i = 1, n do
    if redis.call('HEXISTS', KEYS[3], ARGV[idBase + i - 1]) == 1 then return snapshot() end
  end
  -- The blobs first: a blob key holding another type (WRONGTYPE) stops the script before
  -- any event is written.
  local carried = tonumber(ARGV[12])
  local named = tonumber(ARGV[13])
  if carried > 0 then
    ${SERVER_NOW_MS}
    local stamp = string.format('%d', now)
    local contentBase = idBase + 2 * n
    for i = 1, carried do
      local k = 6 + 3 * (i - 1)
      redis.call('SADD', KEYS[k + 1], ARGV[7])
      redis.call('SET', KEYS[k + 2], ARGV[contentBase + i - 1], 'NX')
      redis.call('SET', KEYS[k + 3], stamp)
      redis.call('SADD', KEYS[7 + 3 * carried + named], ARGV[contentBase + carried + i - 1])
    end
  end
  for i = 1, named do redis.call('SADD', KEYS[6 + 3 * carried + i], ARGV[7]) end
  local last = redis.call('HINCRBY', KEYS[1], 'cursor', n)
  local first = last - n + 1
  for i = 1, n do
    local cursor = string.format('%d', first + i - 1)
    redis.call('RPUSH', KEYS[2], ARGV[idBase + n + i - 1])
    redis.call('HSET', KEYS[3], ARGV[idBase + i - 1], cursor)
    redis.call('RPUSH', KEYS[5], cursor)
  end
  local newLength = string.format('%d', length + n)
  if length == 0 then
    redis.call('HSET', KEYS[6], 'runId', ARGV[6], 'startedAt', ARGV[8], 'length', newLength,
      'status', ARGV[9], 'lastHash', ARGV[10])
    if ARGV[11] ~= '' then redis.call('HSET', KEYS[6], 'parentRunId', ARGV[11]) end
    redis.call('RPUSH', KEYS[4], ARGV[5])
  else
    redis.call('HSET', KEYS[6], 'length', newLength, 'status', ARGV[9], 'lastHash', ARGV[10])
  end
  if first == 1 then
    redis.call('HSET', KEYS[1], 'sessionId', ARGV[7], 'createdAt', ARGV[8], 'updatedAt', ARGV[8])
  else
    redis.call('HSET', KEYS[1], 'updatedAt', ARGV[8])
  end
  local listed = redis.call('HGET', KEYS[1], 'listed')
  return {'ok', first, listed and 1 or 0}
end
`;

/** One append (or fork, or read of a snapshot). */
export const APPEND_SCRIPT = script(`${APPEND_FUNCTION}
return append(KEYS, ARGV)
`);

/**
 * Several appends in one script call: the store's group commit (on a Cluster, of ONE session,
 * so one hash slot; on one server, of any sessions). KEYS: each call's keys in turn
 * (APPEND_SCRIPT's layout: 6, 3 per blob carried, 1 per other blob named, 1 if any is
 * carried). ARGV: 1 the number of calls, then per call its ARGV count and its ARGV
 * (APPEND_SCRIPT's layout). Returns the list of each call's reply. Each append is checked and
 * written on its own, exactly as by APPEND_SCRIPT.
 */
export const APPEND_BATCH_SCRIPT = script(`${APPEND_FUNCTION}
local out = {}
local at = 2
local keyAt = 0
for call = 1, tonumber(ARGV[1]) do
  local count = tonumber(ARGV[at])
  local args = {}
  for i = 1, count do args[i] = ARGV[at + i] end
  local carried = tonumber(args[12])
  local keys = {}
  for i = 1, 6 + 3 * carried + tonumber(args[13]) + (carried > 0 and 1 or 0) do
    keys[i] = KEYS[keyAt + i]
  end
  out[call] = append(keys, args)
  at = at + count + 1
  keyAt = keyAt + #keys
end
return out
`);

/**
 * The deletion of a session's keys (retention), atomic against its appends, which are scripts
 * on the same slot. KEYS: 1 meta, 2 log, 3 ids, 4 runs, then each run's events and head keys in
 * the order of the runs list, then the set of refs put for the session. ARGV: 1 the log length
 * the caller read, then the run hashes it read (the runs list). Deletes every key and returns 1 only if the session is still exactly
 * what the caller read (no event and no run added since) with every run closed. Otherwise it
 * deletes nothing and returns 0, or 2 if the session is gone (another deleteSession was first).
 * Either way the caller looks again. The sessions index lives in another slot: the caller
 * takes the session out of it after this script (delete-session.ts).
 */
export const DELETE_SESSION_SCRIPT = script(`
local function unchanged()
  if redis.call('LLEN', KEYS[2]) ~= tonumber(ARGV[1]) then return false end
  local hashes = redis.call('LRANGE', KEYS[4], 0, -1)
  if #hashes ~= #ARGV - 1 then return false end
  for i = 1, #hashes do
    if hashes[i] ~= ARGV[i + 1] then return false end
    local status = redis.call('HGET', KEYS[4 + 2 * i], 'status')
    if status == false or status == 'running' then return false end
  end
  return true
end
if redis.call('EXISTS', KEYS[2]) == 0 then return 2 end
if not unchanged() then return 0 end
for i = 1, #KEYS, 100 do redis.call('DEL', unpack(KEYS, i, math.min(i + 99, #KEYS))) end
return 1
`);

/**
 * Reads a slice of a run: KEYS 1 run events, 2 log; ARGV 1 first index, 2 last index (LRANGE
 * bounds). Returns `{cursor1, json1, ...}` from one consistent view, the run's events read from
 * the session's log a stretch at a time (READ_LOG_FUNCTION).
 */
export const READ_RUN_SCRIPT = script(`${READ_LOG_FUNCTION}
return readLog(KEYS[2], redis.call('LRANGE', KEYS[1], ARGV[1], ARGV[2]), {})
`);

/**
 * putBlob of one blob: its content (SET NX), its touched-at time, the server's clock in epoch ms
 * (never the writer's: writers and the process that runs retention may be on hosts whose clocks
 * disagree), and for a put for a session that session's claim (SADD to the blob's session
 * set), together: retention never sees a claim without its blob, or a blob without its time.
 * On one server the same script lists the blob in the session's `puts` set (KEYS[4]), so that
 * collectBlobs, which deletes a blob and its gone claimants' entries in one script too, sees
 * the put whole or not at all (collect-blobs.ts); a Cluster holds that set in the session's
 * slot, and the store adds the entry after this script.
 * KEYS (one slot: the blob's hash tag): 1 the blob's session set, 2 the blob, 3 its touched-at
 * time, 4 (one server, a put for a session) the session's puts set. ARGV: 1 the stored bytes,
 * 2 the session (idField), or "" for a put for no session, 3 the blob's ref (with KEYS[4]).
 */
export const PUT_BLOB_SCRIPT = script(`
${SERVER_NOW_MS}
if ARGV[2] ~= '' then redis.call('SADD', KEYS[1], ARGV[2]) end
if KEYS[4] then redis.call('SADD', KEYS[4], ARGV[3]) end
redis.call('SET', KEYS[2], ARGV[1], 'NX')
redis.call('SET', KEYS[3], string.format('%d', now))
return 1
`);

/**
 * Retention of one blob a deleted session referenced, atomically against putBlob (one script
 * call: the claim, SET NX and the touched-at time) and the reference index (the append script's
 * SADD on one server, the SADD before it on a Cluster). KEYS (one slot: the blob's hash tag): 1 the blob's session set, 2 the blob,
 * 3 its touched-at time. ARGV: 1 the deleted session (idField), 2 the grace period (ms, on the
 * server's clock, as putBlob stamps). Returns 1 if the blob was deleted.
 */
export const COLLECT_BLOB_SCRIPT = script(`
${SERVER_NOW_MS}
redis.call('SREM', KEYS[1], ARGV[1])
if redis.call('SCARD', KEYS[1]) > 0 then return 0 end
local touched = redis.call('GET', KEYS[3])
if touched and tonumber(touched) > now - tonumber(ARGV[2]) then return 0 end
local deleted = redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[3])
return deleted
`);

/**
 * collectBlobs' first look at one blob (reads only). KEYS (one slot: the blob's hash tag): 1 the
 * blob's session set, 2 the blob, 3 its touched-at time. ARGV: 1 the grace period (ms, on the
 * server's clock, as putBlob stamps), 2 what the caller found: "blob" (the content key) or
 * "set" (the session set key). For a blob, returns 0 when there is nothing to collect (the blob
 * is gone, or put within the grace), else the list of its session set's members (maybe empty).
 * For a set, returns 0 while its blob exists (the blob's own look covers it) or when it is
 * empty, else its members: a claim left with no blob (an append that named a blob never put,
 * or that failed after indexing it, in a session deleted since). The caller checks the members'
 * existence in their own slots before ORPHAN_BLOB_SCRIPT.
 */
export const BLOB_CANDIDATE_SCRIPT = script(`
${SERVER_NOW_MS}
if redis.call('EXISTS', KEYS[2]) == 0 then
  if ARGV[2] ~= 'set' then return 0 end
  local members = redis.call('SMEMBERS', KEYS[1])
  if #members == 0 then return 0 end
  return members
end
if ARGV[2] == 'set' then return 0 end
local touched = redis.call('GET', KEYS[3])
if touched and tonumber(touched) > now - tonumber(ARGV[1]) then return 0 end
return redis.call('SMEMBERS', KEYS[1])
`);

/**
 * collectBlobs' deletion of one blob, atomically against putBlob (the claim, SET NX and the
 * touched-at time in one script call) and the reference index (the append script's SADD on one
 * server, the SADD before it on a Cluster). KEYS: as BLOB_CANDIDATE_SCRIPT's, then (one server
 * only) the `puts` set of each gone session, in the order of ARGV's members. ARGV: 1 the grace
 * period, 2 the blob's ref, then the members of the session set that the caller found to be
 * sessions that do not exist. It checks again that the blob was not put within the grace, and
 * that the set holds no member but those (a session added since, or one the caller saw
 * existing, keeps the blob); then it deletes the blob, its time and its session set, and takes
 * the blob out of the `puts` sets given: a put for one of those sessions is then wholly before
 * this script (and deleted with it) or wholly after (its entry stays). Returns 1 if the blob was
 * deleted, 2 if it was already gone (a set left without its blob, or another pass was first)
 * and only its other keys went, 0 if it is kept.
 */
export const ORPHAN_BLOB_SCRIPT = script(`
${SERVER_NOW_MS}
local touched = redis.call('GET', KEYS[3])
if touched and tonumber(touched) > now - tonumber(ARGV[1]) then return 0 end
local gone = 0
for i = 3, #ARGV do gone = gone + redis.call('SISMEMBER', KEYS[1], ARGV[i]) end
if redis.call('SCARD', KEYS[1]) > gone then return 0 end
local deleted = redis.call('DEL', KEYS[2])
redis.call('DEL', KEYS[1], KEYS[3])
for i = 4, #KEYS do redis.call('SREM', KEYS[i], ARGV[2]) end
if deleted == 1 then return 1 end
return 2
`);
