// `npm run demo:openai-agents`: an OpenAI Agents SDK shop agent (runWithLedger, ledgerTool) is
// SIGKILLed inside place_order, a tool that charges the customer. The ledger names the call in
// flight; resumeRun in a new process hands it back as the SDK's own tool-approval interruption,
// the app checks its order log and approves it, and the run finishes with one order, as a run
// with no crash has. Offline (a scripted model provider), on embedded SQLite.
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { shellQuote } from "@agent-ledger/cli";
import { agentLedger, effects, killAt, runToEnd } from "./agent-process.js";

const root = resolve(process.env.AGENT_LEDGER_DEMO_DIR ?? join(".demo", "openai-agents"));
rmSync(root, { recursive: true, force: true });
const sessionId = "lamp-order";
const runId = "shop-run";

function place(name: string) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return { dir, db: join(dir, "ledger.db") };
}

const row = (label: string, done: ReturnType<typeof effects>) =>
  `   ${label.padEnd(24)} model calls answered ${String(done.completedCalls).padStart(2)}   warehouse notices ${String(done.notified.length).padStart(2)}   orders placed ${String(done.orders.length).padStart(2)}`;

console.log(
  "agent-ledger + OpenAI Agents SDK: runWithLedger records every turn, resumeRun picks a dead run up.",
);
console.log(
  'Task: "Buy a lamp" (look the price up, notify the warehouse, place the order, hand off for a receipt).\n',
);

console.log(
  "1. Reference run (no crash) ... and the same agent killed with SIGKILL inside place_order.",
);
const reference = place("reference");
const baseline = await runToEnd(["run", reference.db, reference.dir, sessionId, runId]);
const crash = place("crash");
await killAt(["run", crash.db, crash.dir, sessionId, runId], "tool");
const atCrash = effects(crash.dir);
console.log(
  `   child process ended by SIGKILL: ${atCrash.completedCalls} model calls answered, ${atCrash.notified.length} warehouse notice, ${atCrash.orders.length} orders before it\n`,
);

const inspected = await agentLedger(crash.db, "inspect", sessionId);
if (inspected.code !== 0) throw new Error(`inspect: exit ${inspected.code}`);
console.log(`2. What the ledger says: ${inspected.command}`);
// As the command prints it, unchanged.
console.log(`\n${inspected.stdout}`);

console.log("3. A new process calls resumeRun(agent, { store, sessionId, runId }):");
const resumed = await runToEnd(["resume", crash.db, crash.dir, sessionId, runId]);
for (const { name, callId, decision } of resumed.decisions) {
  const found =
    decision === "approved"
      ? `finds no order from ${callId} in its log, so it approves it (state.approve)`
      : `finds the order from ${callId} already in its log, so it rejects it (state.reject)`;
  console.log(
    `   it returns status "interrupted": ${name} (${callId}) as a tool-approval interruption; the app ${found}, and resumeRun goes on.`,
  );
}
const after = effects(crash.dir);
console.log(
  `   model calls made: ${after.startedCalls - atCrash.startedCalls} (the ones after the crash); warehouse notified again: ${after.notified.length - atCrash.notified.length}`,
);
console.log(`   status ${resumed.status}, final output: ${JSON.stringify(resumed.finalOutput)}\n`);

console.log("4. Counts, crashed + resumed against a run with no crash:");
const expected = effects(reference.dir);
console.log(row("no crash", expected));
console.log(row("crashed, then resumed", after));
const equal =
  JSON.stringify(resumed.finalOutput) === JSON.stringify(baseline.finalOutput) &&
  JSON.stringify([expected.completedCalls, expected.notified, expected.orders.length]) ===
    JSON.stringify([after.completedCalls, after.notified, after.orders.length]);
console.log(
  equal
    ? "   equal: no model call paid twice, the warehouse told once, one order placed.\n"
    : "   NOT EQUAL: the resume repeated or lost work.\n",
);
console.log(
  `(open the ledger in the viewer: npm run agent-ledger -- serve --store ${shellQuote(`sqlite:${crash.db}`)})`,
);
// The story did not happen if the resume asked nothing about the call in flight.
if (!equal || resumed.decisions.length === 0) process.exitCode = 1;
