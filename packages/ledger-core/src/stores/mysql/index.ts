// Placeholder until the mysql store lands; openStore() reports it as unavailable.
import { StoreUnavailableError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";

export const MysqlEventStore = {
  fromUrl(url: string): EventStore {
    throw new StoreUnavailableError(`the mysql store is not built yet (${url.split(":")[0]})`);
  },
};
