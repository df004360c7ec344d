import { spawn } from "node:child_process";

/**
 * Runs `script` (an ES module's source) in a child Node process with `args`, and kills it with
 * SIGKILL as soon as it prints `marker`: a crash at a known point, as a real process dies.
 * Resolves once it is dead; rejects if it exits any other way (with its stderr).
 */
export function runUntilKilled(script: string, args: string[], marker: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes(marker)) child.kill("SIGKILL");
    });
    child.on("exit", (code, signal) =>
      signal === "SIGKILL"
        ? resolve()
        : reject(new Error(`the child exited with ${code ?? signal} before ${marker}: ${stderr}`)),
    );
  });
}
