// The agent as its own process: `node agent-process.js <storeUrl> <sessionId> <runId> <workDir> fresh|resume`.
// Progress goes to stdout as JSON lines so the demo can kill it at a known point.
import { LedgerError, openStore } from "@agent-ledger/core";
import { runAgentLoop } from "./agent-loop.js";

const [storeUrl, sessionId, runId, workDir, mode] = process.argv.slice(2);
if (!storeUrl || !sessionId || !runId || !workDir || (mode !== "fresh" && mode !== "resume")) {
  console.error("usage: agent-process <storeUrl> <sessionId> <runId> <workDir> fresh|resume");
  process.exit(2);
}
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);
const store = await openStore(storeUrl);
try {
  const answer = await runAgentLoop({
    store,
    sessionId,
    runId,
    workDir,
    resume: mode === "resume",
    onProgress: say,
  });
  say({ kind: "finished", answer });
} catch (error) {
  say({
    kind: "error",
    code: LedgerError.isInstance(error) ? error.code : undefined,
    message: (error as Error).message,
  });
  process.exitCode = 1;
} finally {
  await store.close();
}
