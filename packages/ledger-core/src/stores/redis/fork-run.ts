import { isoNow } from "../../events/clock.js";
import { forkSourceMissing, forkTargetTaken } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { EMPTY_HEAD, planFork } from "../../store/append-plan.js";
import type { AppendResult, ForkRequest } from "../../store/event-store.js";
import { validateFork } from "../../store/validate.js";
import { unavailable } from "./client.js";
import { runKeys, sessionKeys } from "./keys.js";
import { readRunHead, readRunSlice } from "./read-events.js";
import { rememberHead } from "./run-cache.js";
import { listSession } from "./session-index.js";
import type { RedisStoreState } from "./store-state.js";
import { writePlan } from "./write-plan.js";

/** `RedisEventStore.fork`. */
export async function forkRun(state: RedisStoreState, request: ForkRequest): Promise<AppendResult> {
  validateFork(request);
  const source = await readRunHead(state, { sessionId: request.sessionId, runId: request.runId });
  if (!source.exists) throw forkSourceMissing(request);
  if (request.uptoSeq > source.length) throw forkSourceMissing(request, source.length);
  // A run's events never change once written, so the prefix read here stays valid.
  const prefix = await readRunSlice(state, request.sessionId, request.runId, 0, request.uptoSeq);
  const session = sessionKeys(state.prefix, request.sessionId);
  const target = runKeys(state.prefix, request.sessionId, request.newRunId);
  try {
    const plan = planFork({
      sessionId: request.sessionId,
      newRunId: request.newRunId,
      source: prefix,
      newEventId: uuidv7,
      now: isoNow(),
    });
    const outcome = await writePlan(
      state,
      session,
      target,
      { sessionId: request.sessionId, runId: request.newRunId, events: plan.events },
      { kind: "write", events: plan.events, head: plan.head },
      EMPTY_HEAD,
    );
    if (outcome.kind === "refused") {
      throw forkTargetTaken(request.sessionId, request.newRunId, outcome.snapshot.head.length);
    }
    rememberHead(state, target.head, plan.head);
    if (!outcome.listed) await listSession(state, session, request.sessionId);
    return { events: outcome.events, deduplicated: false };
  } catch (error) {
    throw unavailable(error, "fork", state.client);
  }
}
