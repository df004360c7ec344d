export { rejection, seenByCaller } from "./caller-view.js";
export type {
  ConformanceCase,
  ConformanceOptions,
  ConformanceRunner,
  MakeStore,
} from "./conformance.js";
export { eventStoreConformanceCases, runEventStoreConformance } from "./conformance.js";
export { mulberry32 } from "./conformance-random.js";
export { storedBytes } from "./conformance-retention.js";
export {
  type ChildLinesEnd,
  childLines,
  compiledBeside,
  HaltingStore,
  haltAfterAppend,
  haltHere,
  killAtMarker,
  readReports,
  reportToParent,
} from "./crash-child.js";
export type { FreshDatabase, FreshPlaces } from "./fresh-places.js";
export { freshPlaces } from "./fresh-places.js";
export { recordHandoffChain } from "./handoff-chain.js";
export { interleavedStore } from "./interleaved-store.js";
export { type ScratchHooks, scratchDirectory } from "./scratch-directory.js";
export type { SecretHit } from "./secret-scan.js";
export {
  scanPostgresForSecret,
  scanRedisForSecret,
  scanSqliteForSecret,
} from "./secret-scan.js";
export type { ServerKind } from "./servers.js";
export { SERVER_URLS, serverAvailable } from "./servers.js";
export { fileCheckProcesses, makeSlowToCheck } from "./slow-file-check.js";
export type { StatusTreeRuns } from "./status-tree.js";
export { statusTree } from "./status-tree.js";
