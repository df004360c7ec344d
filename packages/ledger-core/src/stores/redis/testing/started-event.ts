import type { NewEvent } from "../../../events/types.js";

/**
 * A `run.started` event of agent a1 (with `eventId` when given): the first event of most runs
 * the RedisEventStore tests write.
 */
export const started = (eventId?: string): NewEvent => ({
  ...(eventId === undefined ? {} : { eventId }),
  type: "run.started",
  actor: { type: "agent", id: "a1" },
  payload: { goal: "test" },
});
