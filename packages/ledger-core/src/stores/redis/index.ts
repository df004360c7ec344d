export type { RedisEventStoreOptions } from "./redis-store.js";
export { RedisEventStore } from "./redis-store.js";
