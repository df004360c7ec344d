import type { RunHead } from "../../events/types.js";
import type { PlannedEvent } from "../../store/append-plan.js";
import { idField, type RunKeys, type SessionKeys } from "./keys.js";

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

/** KEYS and ARGV of APPEND_SCRIPT (see its comment for the layout). */
export function appendScriptCall(
  session: SessionKeys,
  run: RunKeys,
  mode: "read" | "write",
  address: AppendAddress,
  write: PlannedWrite | undefined,
): { keys: string[]; args: (string | number)[] } {
  const ids = (write?.events ?? address.events).map((event) => idField(event.eventId));
  const first = write?.events[0];
  const args: (string | number)[] = [
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
    ...ids,
    ...(write?.events.map((event) => JSON.stringify(event)) ?? []),
  ];
  const keys = [session.meta, session.log, session.ids, session.runs, run.events, run.head];
  return { keys, args };
}
