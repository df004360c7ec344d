import { openStore } from "@agent-ledger/core";
import { resumeRun, runWithLedger } from "@agent-ledger/openai-agents";
import { setTracingDisabled } from "@openai/agents";
import { shopModelProvider } from "./fake-model.js";
import { placedOrders, shopAgent } from "./shop-agent.js";

// node dist/main.js run|resume <sqlite file> <work dir> <sessionId> <runId> [stream|decided]
// resume ... decided: a person already decided with `agent-ledger resolve`; an interruption is
// reported (status "interrupted"), not answered here.
setTracingDisabled(true);
const [command, dbFile, workDir, sessionId, runId, mode] = process.argv.slice(2);
if (!command || !dbFile || !workDir || !sessionId || !runId) {
  console.error("usage: main.js run|resume <db> <workDir> <sessionId> <runId> [stream|decided]");
  process.exit(2);
}

const store = await openStore(`sqlite:${dbFile}`);
const agent = shopAgent(workDir);
const modelProvider = shopModelProvider(workDir);
let result: { status: string; finalOutput: unknown };
if (command === "run" && mode === "stream") {
  const run = await runWithLedger(agent, "Buy a lamp", {
    store,
    sessionId,
    runId,
    modelProvider,
    stream: true,
  });
  for await (const _event of run.stream) {
    // a UI would render the events here
  }
  result = await run.done;
} else if (command === "run") {
  result = await runWithLedger(agent, "Buy a lamp", { store, sessionId, runId, modelProvider });
} else {
  let resumed = await resumeRun(agent, { store, sessionId, runId, modelProvider });
  // A call that was in flight when the process died and may not be repeated blindly comes back
  // as an approval. The "person" here checks the order log: no order from that call -> run it.
  while (resumed.status === "interrupted" && resumed.state && mode !== "decided") {
    for (const item of resumed.interruptions) {
      const callId = (item.rawItem as { callId?: string }).callId ?? "";
      const alreadyPlaced = placedOrders(workDir).some((line) => line.startsWith(`${callId} `));
      if (alreadyPlaced) resumed.state.reject(item, { message: "already placed" });
      else resumed.state.approve(item);
      const name = (item.rawItem as { name?: string }).name ?? "?";
      process.stdout.write(
        `INTERRUPTED ${JSON.stringify({ name, callId, decision: alreadyPlaced ? "rejected" : "approved" })}
`,
      );
    }
    resumed = await resumeRun(agent, {
      store,
      sessionId,
      runId,
      modelProvider,
      state: resumed.state,
    });
  }
  result = resumed;
}
await store.close();
process.stdout.write(
  `${JSON.stringify({ status: result.status, finalOutput: result.finalOutput })}\n`,
);
