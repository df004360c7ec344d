// `npm run demo:langchain`: a LangChain createAgent is SIGKILLed inside a tool that is not
// idempotent (it sends an email). The ledger names the call in flight, the resume refuses to
// guess, a person settles it with the agent-ledger binary, and the resume finishes without a
// second email or a model call paid twice. Offline (a scripted model), on embedded SQLite.
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { shellQuote } from "@agent-ledger/cli";
import { SESSION_ID, workFiles } from "./agent.js";
import {
  agentLedger,
  finalOf,
  lines,
  type Outcome,
  runAndKillInside,
  startAgent,
  unresolvedOf,
} from "./agent-process.js";

const root = resolve(process.env.AGENT_LEDGER_DEMO_DIR ?? join(".demo", "langchain"));
rmSync(root, { recursive: true, force: true });

/** A work directory and a ledger of its own for one run of the agent. */
function place(name: string) {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return { dir, db: join(dir, "ledger.db"), files: workFiles(dir) };
}

function expectCode(step: string, outcome: Outcome, code: number): void {
  if (outcome.code === code) return;
  process.stderr.write(outcome.stderr);
  throw new Error(`${step}: exit ${outcome.code ?? outcome.signal}, expected ${code}`);
}

const counts = (files: ReturnType<typeof workFiles>) => ({
  modelCalls: lines(files.modelCalls),
  emailsSent: lines(files.outbox),
});
const row = (label: string, { modelCalls, emailsSent }: ReturnType<typeof counts>) =>
  `   ${label.padEnd(24)} model calls ${String(modelCalls).padStart(2)}   emails sent ${String(emailsSent).padStart(2)}`;

console.log(
  "agent-ledger + LangChain: createAgent with the ledger's callback handler, middleware and checkpoint saver.",
);
console.log('Task: "Email Bob, then check the weather in Paris."\n');

console.log(
  "1. Reference run (no crash) ... and the same agent killed with SIGKILL inside send_email.",
);
const reference = place("reference");
const referenceRun = await startAgent(["run", reference.db, reference.dir]).done;
expectCode("the reference run", referenceRun, 0);
const crash = place("crash");
const killed = await runAndKillInside(["run", crash.db, crash.dir], "send_email");
console.log(`   child process ended by ${killed.signal ?? `exit ${killed.code}`}\n`);

const inspected = await agentLedger(crash.db, "inspect", SESSION_ID);
expectCode("inspect", inspected, 0);
console.log(`2. What the ledger says: ${inspected.command}`);
// As the command prints it, unchanged.
console.log(`\n${inspected.stdout}`);

console.log("3. A new process resumes. send_email is not idempotent, and it may have sent:");
const stopped = await startAgent(["resume", crash.db, crash.dir]).done;
expectCode("the first resume", stopped, 3);
const attemptId = unresolvedOf(stopped.stdout);
if (attemptId === undefined) throw new Error("the resume stopped without naming the attempt");
console.log(`   the resume stops on unresolved-attempt ${attemptId}: a person decides.\n`);

const reason = "operator checked: the email went out";
console.log(
  `4. The operator sees the email in the outbox (${lines(crash.files.outbox)} line) and abandons the call:`,
);
const resolved = await agentLedger(
  crash.db,
  "resolve",
  "--abandon",
  reason,
  "--",
  SESSION_ID,
  attemptId,
);
expectCode("resolve", resolved, 0);
console.log(`   ${resolved.command}`);
console.log(`${resolved.stdout}`);

console.log(
  "5. The resume again: the graph goes on from its checkpoint (no model call made twice), the email not re-sent.",
);
const resumed = await startAgent(["resume", crash.db, crash.dir]).done;
expectCode("the second resume", resumed, 0);
console.log(`   final answer: ${JSON.stringify(finalOf(resumed.stdout))}\n`);

console.log("6. Counts, crashed + resumed against a run with no crash:");
const expected = counts(reference.files);
const actual = counts(crash.files);
console.log(row("no crash", expected));
console.log(row("crashed, then resumed", actual));
const equal = JSON.stringify(expected) === JSON.stringify(actual);
console.log(
  equal
    ? "   equal: no model call paid twice, no email sent twice.\n"
    : "   NOT EQUAL: the resume repeated or lost work.\n",
);
console.log(
  `(open the ledger in the viewer: npm run agent-ledger -- serve --store ${shellQuote(`sqlite:${crash.db}`)})`,
);
if (!equal || killed.signal !== "SIGKILL") process.exitCode = 1;
