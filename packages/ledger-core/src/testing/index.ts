export type { ServerKind } from "./servers.js";
export { SERVER_URLS, serverAvailable } from "./servers.js";
