export type { PostgresEventStoreOptions } from "./postgres-store.js";
export { PostgresEventStore } from "./postgres-store.js";
