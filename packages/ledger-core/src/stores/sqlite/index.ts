export { decodeBody, encodeBody } from "./body-codec.js";
export type { FileCheckStopped, FileProblemsOptions } from "./file-check.js";
export type { SqliteEventStoreOptions } from "./sqlite-store.js";
export { SqliteEventStore } from "./sqlite-store.js";
export { sqlitePath } from "./sqlite-url.js";
