// `npm run demo:ai-sdk`: an AI SDK streamText agent (ledgerMiddleware + wrapTools) is SIGKILLed
// while its last model call streams. The ledger names the cut call, a new process resumes:
// the two finished model calls and both tools answered from the ledger, the cut call made once
// more, the email sent once. Offline (a scripted model), on embedded SQLite.
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { shellQuote } from "@agent-ledger/cli";
import {
  agentLedger,
  type Counts,
  type Outcome,
  runAgentProcess,
  scenario,
} from "./agent-process.js";

const root = resolve(process.env.AGENT_LEDGER_DEMO_DIR ?? join(".demo", "ai-sdk"));
rmSync(root, { recursive: true, force: true });

function expectResult(step: string, outcome: Outcome) {
  if (outcome.result) return outcome.result;
  throw new Error(`${step} gave no result: ${JSON.stringify(outcome.error ?? outcome)}`);
}

const count = (effects: string[], tool: string) =>
  effects.filter((line) => line.startsWith(`${tool} `)).length;
const row = (label: string, counts: Counts) =>
  `   ${label.padEnd(24)} model calls answered ${String(counts.finished).padStart(2)}   lookups ${String(count(counts.effects, "lookupOrder")).padStart(2)}   emails sent ${String(count(counts.effects, "sendEmail")).padStart(2)}`;

console.log(
  "agent-ledger + Vercel AI SDK: streamText with ledgerMiddleware on the model and wrapTools on the tools.",
);
console.log('Task: "Where is order 42? Tell the customer."\n');

console.log(
  "1. Reference run (no crash) ... and the same agent killed with SIGKILL while its third model call streams.",
);
const reference = scenario(join(root, "reference"));
const baseline = expectResult(
  "the reference run",
  await runAgentProcess(reference.args("stream", "new")),
);
const crash = scenario(join(root, "crash"));
const killed = await runAgentProcess(crash.args("stream", "new", "stream"), "IN_STREAM");
const atCrash = crash.counts();
console.log(
  `   child process ${killed.killed ? "ended by SIGKILL" : "exited before the kill"}: ${atCrash.finished} model calls answered, ${atCrash.effects.length} tool effects done before it\n`,
);

const inspected = await agentLedger(crash.files.db, "inspect", "order-42");
if (inspected.code !== 0) throw new Error(`inspect: exit ${inspected.code}`);
console.log(`2. What the ledger says: ${inspected.command}`);
// As the command prints it, unchanged.
console.log(`\n${inspected.stdout}`);

console.log("3. A new process resumes the same run with the same streamText call:");
const resumed = expectResult("the resume", await runAgentProcess(crash.args("stream", "resume")));
const after = crash.counts();
const made = after.started - atCrash.started;
console.log(
  `   model calls made: ${made} (the one cut mid-stream, which never delivered its answer); answered from the ledger: ${resumed.steps - made}`,
);
console.log(
  `   tool effects repeated: ${after.effects.length - atCrash.effects.length}; final text: ${JSON.stringify(resumed.text)} (${resumed.steps} steps)\n`,
);

console.log("4. Counts, crashed + resumed against a run with no crash:");
const expected = reference.counts();
console.log(row("no crash", expected));
console.log(row("crashed, then resumed", after));
const equal =
  resumed.text === baseline.text &&
  JSON.stringify([expected.finished, expected.effects]) ===
    JSON.stringify([after.finished, after.effects]);
console.log(
  equal
    ? "   equal: the same answer, no tool effect repeated or lost; only the cut call was made twice.\n"
    : "   NOT EQUAL: the resume repeated or lost work.\n",
);
console.log(
  `(open the ledger in the viewer: npm run agent-ledger -- serve --store ${shellQuote(`sqlite:${crash.files.db}`)})`,
);
if (!equal || !killed.killed) process.exitCode = 1;
