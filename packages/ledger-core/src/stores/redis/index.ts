// Placeholder until the redis store lands; openStore() reports it as unavailable.
import { StoreUnavailableError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";

export const RedisEventStore = {
  fromUrl(url: string): EventStore {
    throw new StoreUnavailableError(`the redis store is not built yet (${url.split(":")[0]})`);
  },
};
