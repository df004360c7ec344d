import type { EventStore } from "../store/event-store.js";
import { runMixedWriters } from "./conformance-mixed.js";
import { runAgainstReference } from "./conformance-model.js";

/**
 * Several handles on one database, as separate processes would hold (each with its own head
 * cache and connections): they answer the seeded random sequences as the reference does, then
 * carry eight racing writers, spread over them, without losing an event. Inits the handles and
 * always closes them.
 */
export async function checkSharedHandles(handles: EventStore[]): Promise<void> {
  try {
    for (const handle of handles) await handle.init();
    await runAgainstReference(handles);
    await runMixedWriters(handles);
  } finally {
    for (const handle of handles) await handle.close();
  }
}
