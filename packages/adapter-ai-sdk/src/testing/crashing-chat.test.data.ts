import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Where the crashing chat records. */
export const CRASHED_CHAT = { sessionId: "chat", runId: "turn-1" };

/** What the child prints once it is inside the tool call that never returns. */
export const IN_TOOL = "IN_TOOL";

// The compiled child, beside this file's compiled copy (tests run after `tsc -b`, as the
// example's SIGKILL tests do).
const CHILD = fileURLToPath(new URL("./crashing-chat.test.child.js", import.meta.url)).replace(
  /([\\/])src([\\/]testing[\\/])/,
  "$1dist$2",
);

/**
 * Runs the crashing chat in a child process recording into the SQLite file `path`, and kills
 * it with SIGKILL while its second tool call (`send`, toolCallId `call_0` again) is in flight.
 */
export function crashChatInsideTool(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    let killed = false;
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (!killed && out.includes(`${IN_TOOL}\n`)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", () => {
      if (killed) resolve();
      else reject(new Error(`the child ended before reaching its tool call: ${out}`));
    });
  });
}
