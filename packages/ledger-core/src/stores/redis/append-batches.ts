import { ReplyError } from "ioredis";
import {
  type AppendAddress,
  type AppendCall,
  appendScriptCall,
  type PlannedWrite,
  type ScriptBlobs,
} from "./append-call.js";
import type { RunKeys, SessionKeys } from "./keys.js";
import { APPEND_BATCH_SCRIPT, APPEND_SCRIPT, runScript } from "./scripts.js";
import type { RedisStoreState } from "./store-state.js";

/**
 * Stored blob bytes one batch script call carries at most: appends whose blobs together pass it
 * go in script calls of their own. A script holds the server for its whole run, and a call is
 * one command that the server reads whole before it runs it.
 */
const BLOB_BYTES_PER_SCRIPT = 16 * 1024 * 1024;

/**
 * One call of APPEND_SCRIPT, which goes out with the calls that wait with it (the store's
 * group commit, `scripts` in store-state.ts); its reply, or the error that failed it.
 */
export async function submitAppendScript(
  state: RedisStoreState,
  session: SessionKeys,
  run: RunKeys,
  mode: "read" | "write",
  address: AppendAddress,
  write: PlannedWrite | undefined,
  blobs?: ScriptBlobs,
): Promise<unknown[]> {
  const reply = await state.scripts.submit(
    appendScriptCall(session, run, mode, address, write, blobs),
  );
  if (reply instanceof Error) throw reply;
  return reply;
}

/** The calls the group commit hands over: one script call for all, or each alone. */
export async function runAppendScripts(
  state: RedisStoreState,
  calls: AppendCall[],
): Promise<(unknown[] | Error)[]> {
  const [only] = calls;
  if (calls.length === 1 && only !== undefined)
    return [(await runScript(state.client, APPEND_SCRIPT, only.keys, only.args)) as unknown[]];
  let blobBytes = 0;
  for (const call of calls) blobBytes += call.blobBytes;
  if (blobBytes > BLOB_BYTES_PER_SCRIPT) return eachAlone(state, calls);
  const args: (string | number | Buffer)[] = [calls.length];
  for (const call of calls) {
    args.push(call.args.length);
    for (const arg of call.args) args.push(arg);
  }
  try {
    return (await runScript(
      state.client,
      APPEND_BATCH_SCRIPT,
      calls.flatMap((call) => call.keys),
      args,
    )) as unknown[][];
  } catch (error) {
    // The server refused the script (a key of one session holding another type, say): the
    // call fails whole, so each append runs again alone and only the one at fault fails.
    // Those the failed call wrote before the error are found stored, and answered so.
    if (!(error instanceof ReplyError)) throw error;
    return eachAlone(state, calls);
  }
}

/** Each call in a script call of its own (sent at once), answered with its reply or error. */
function eachAlone(state: RedisStoreState, calls: AppendCall[]): Promise<(unknown[] | Error)[]> {
  return Promise.all(
    calls.map((call) =>
      runScript(state.client, APPEND_SCRIPT, call.keys, call.args).then(
        (reply) => reply as unknown[],
        (failure: unknown) => (failure instanceof Error ? failure : new Error(String(failure))),
      ),
    ),
  );
}
