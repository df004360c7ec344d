export type { MysqlEventStoreOptions } from "./mysql-store.js";
export { MysqlEventStore } from "./mysql-store.js";
