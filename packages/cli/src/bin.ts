#!/usr/bin/env node
import { runCli } from "./run-cli.js";

const controller = new AbortController();
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second Ctrl-C quits at once.
    if (interrupted) process.exit(130);
    interrupted = true;
    controller.abort();
  });
}

// `agent-ledger inspect s | head`: once the reader has closed the pipe, stop quietly (as a
// Unix tool ended by SIGPIPE does) instead of dying on an unhandled EPIPE with a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit(0);
});

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  signal: controller.signal,
});
// Exit once stdout is flushed, even if a driver left a socket open (an unreachable server).
process.exitCode = code;
process.stdout.write("", () => process.exit(code));
