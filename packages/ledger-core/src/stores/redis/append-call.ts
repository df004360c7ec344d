import type { RunHead } from "../../events/types.js";
import type { PlannedEvent } from "../../store/append-plan.js";
import { bufferOf, type EncodedBlob } from "../../store/blob.js";
import { blobKeys, blobScriptKeys, idField, type RunKeys, type SessionKeys } from "./keys.js";

/** Where an append goes, and the ids of its batch. */
export interface AppendAddress {
  sessionId: string;
  runId: string;
  events: { eventId: string }[];
}

/** The planned rows and the head they were planned on (write mode). */
export interface PlannedWrite {
  events: PlannedEvent[];
  expectedLength: number;
  expectedLastHash: string | null;
  newHead: RunHead;
}

/**
 * The blobs a write stores in its own script (a store on one server): those it carries, each
 * once, and the refs its events name that it does not carry.
 */
export interface ScriptBlobs {
  prefix: string;
  carried: EncodedBlob[];
  named: string[];
}

/** One call of APPEND_SCRIPT: its KEYS and ARGV, and the stored bytes of the blobs it carries. */
export interface AppendCall {
  keys: string[];
  args: (string | number | Buffer)[];
  blobBytes: number;
}

/**
 * KEYS and ARGV of APPEND_SCRIPT (see its comment for the layout). `blobs` only in write mode,
 * and only on one server: the blob keys are outside the session's slot.
 */
export function appendScriptCall(
  session: SessionKeys,
  run: RunKeys,
  mode: "read" | "write",
  address: AppendAddress,
  write: PlannedWrite | undefined,
  blobs?: ScriptBlobs,
): AppendCall {
  const ids = (write?.events ?? address.events).map((event) => idField(event.eventId));
  const first = write?.events[0];
  const stored = write === undefined ? undefined : blobs;
  const carried = stored?.carried ?? [];
  const named = stored?.named ?? [];
  const args: (string | number | Buffer)[] = [
    mode,
    ids.length,
    write?.expectedLength ?? 0,
    write?.expectedLastHash ?? "",
    run.runHash,
    idField(address.runId),
    idField(address.sessionId),
    first?.recordedAt ?? "",
    write?.newHead.status ?? "",
    write?.newHead.lastHash ?? "",
    first?.parentRunId === undefined ? "" : idField(first.parentRunId),
    carried.length,
    named.length,
    ...ids,
  ];
  const keys = [session.meta, session.log, session.ids, session.runs, run.events, run.head];
  if (write !== undefined) for (const event of write.events) args.push(JSON.stringify(event));
  let blobBytes = 0;
  if (stored !== undefined) {
    for (const blob of carried) {
      keys.push(...blobScriptKeys(stored.prefix, blob.ref.slice(7)));
      args.push(bufferOf(blob.stored));
      blobBytes += blob.stored.byteLength;
    }
    for (const ref of named) keys.push(blobKeys(stored.prefix, ref.slice(7)).sessions);
    if (carried.length > 0) {
      keys.push(session.puts);
      for (const blob of carried) args.push(blob.ref);
    }
  }
  return { keys, args, blobBytes };
}
