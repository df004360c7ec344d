export type { CommandContext } from "./commands/context.js";
export { exportOtlpJson } from "./commands/export.js";
export { eventLine } from "./commands/tail.js";
export type { ExitCode } from "./errors.js";
export { CliError, EXIT_CODES, exitCodeOf } from "./errors.js";
export { formatDuration, shellQuote } from "./format.js";
export type { CliIo, OutputStream } from "./io.js";
export type { OtlpKeyValue, OtlpSpan, OtlpTraceRequest } from "./otlp-json.js";
export { toOtlpJson } from "./otlp-json.js";
export type { RenderInspectionOptions } from "./render-inspection.js";
export { renderInspection } from "./render-inspection.js";
export { HELP, runCli } from "./run-cli.js";
export {
  assertSessionExists,
  DEFAULT_STORE_URL,
  openCliStore,
  resolveStoreUrl,
} from "./store.js";
export { CONTENT_SECURITY_POLICY, isLoopbackHost } from "./viewer/security.js";
export type { ViewerHandle, ViewerOptions } from "./viewer/viewer-server.js";
export { startViewer } from "./viewer/viewer-server.js";
