import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ChildOutcome {
  messages: Record<string, unknown>[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/**
 * Runs a node script as a real child process, reading its JSON-line progress. When
 * `killWhen` matches a message, the child gets SIGKILL at once (no cleanup runs in it).
 */
export function runNodeChild(
  script: string,
  args: string[],
  killWhen?: (message: Record<string, unknown>) => boolean,
): Promise<ChildOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    const messages: Record<string, unknown>[] = [];
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      messages.push(message);
      if (killWhen?.(message)) child.kill("SIGKILL");
    });
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ messages, code, signal, stderr }));
  });
}
