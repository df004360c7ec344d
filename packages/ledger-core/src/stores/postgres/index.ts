// Placeholder until the postgres store lands; openStore() reports it as unavailable.
import { StoreUnavailableError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";

export const PostgresEventStore = {
  fromUrl(url: string): EventStore {
    throw new StoreUnavailableError(`the postgres store is not built yet (${url.split(":")[0]})`);
  },
};
