import type { LedgerEvent, RunHead } from "../../events/types.js";
import { type AppendPlan, assignCursors } from "../../store/append-plan.js";
import { submitAppendScript } from "./append-batches.js";
import type { AppendAddress, ScriptBlobs } from "./append-call.js";
import { decodeSnapshot, type Snapshot } from "./codec.js";
import type { RunKeys, SessionKeys } from "./keys.js";
import type { RedisStoreState } from "./store-state.js";

type WriteOutcome =
  | { kind: "written"; events: LedgerEvent[]; listed: boolean }
  | { kind: "refused"; snapshot: Snapshot };

/**
 * A planned write (an append's or a fork's) through the append script, on the head it was
 * planned on: the events as written, or the script's own view of the run when it refused.
 */
export async function writePlan(
  state: RedisStoreState,
  session: SessionKeys,
  run: RunKeys,
  address: AppendAddress,
  plan: Extract<AppendPlan, { kind: "write" }>,
  head: RunHead,
  blobs?: ScriptBlobs,
): Promise<WriteOutcome> {
  const reply = await submitAppendScript(
    state,
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
