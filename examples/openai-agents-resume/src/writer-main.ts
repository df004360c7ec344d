import { openStore } from "@agent-ledger/core";
import { resumeRun, runWithLedger } from "@agent-ledger/openai-agents";
import { setTracingDisabled } from "@openai/agents";
import { editorAgent } from "./writer-agent.js";

// node dist/writer-main.js run|resume <sqlite file> <work dir>
// The editor agent (with a writer agent as its tool) on session "editor", run "editor-run". A
// resume approves the interruptions it is shown: a person decided the rest with
// `agent-ledger resolve`, and the ledger holds those decisions.
setTracingDisabled(true);
const [command, dbFile, workDir] = process.argv.slice(2);
if ((command !== "run" && command !== "resume") || !dbFile || !workDir) {
  console.error("usage: writer-main.js run|resume <db> <workDir>");
  process.exit(2);
}
const store = await openStore(`sqlite:${dbFile}`);
const agent = editorAgent(workDir);
const options = { store, sessionId: "editor", runId: "editor-run" };
let result =
  command === "run"
    ? await runWithLedger(agent, "Announce the lamps", options)
    : await resumeRun(agent, options);
const asked: string[] = [];
while (result.status === "interrupted" && result.state) {
  for (const item of result.interruptions) {
    asked.push(item.name ?? "");
    result.state.approve(item);
  }
  result = await resumeRun(agent, { ...options, state: result.state });
}
await store.close();
process.stdout.write(
  `${JSON.stringify({ status: result.status, finalOutput: result.finalOutput, asked })}\n`,
);
