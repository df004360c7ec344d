export type { CliResult } from "./cli-in-process.js";
export { runCliInProcess } from "./cli-in-process.js";
