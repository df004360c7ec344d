// Placeholder until the sqlite store lands; openStore() reports it as unavailable.
import { StoreUnavailableError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";

export const SqliteEventStore = {
  fromUrl(url: string): EventStore {
    throw new StoreUnavailableError(`the sqlite store is not built yet (${url.split(":")[0]})`);
  },
};
