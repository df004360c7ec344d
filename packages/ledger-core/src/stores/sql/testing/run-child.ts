import { spawn } from "node:child_process";

/**
 * Runs a compiled test child (`node <script> <argument as JSON>`) to its end and resolves with
 * the JSON line it printed; rejects with its stderr, named `what`, when it fails.
 */
export function runTestChild<T>(script: string, argument: object, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(argument)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve(JSON.parse(stdout.trim()) as T);
      else reject(new Error(`${what} exited with ${code}: ${stderr}`));
    });
  });
}
