// Usage: node dist/main.js <run|resume|resolve> <db file> <work dir> [reason]
import { inspectSession, openStore, SessionRecorder } from "@agent-ledger/core";
import { findLedgerError } from "@agent-ledger/langchain";
import { buildAgent, RUN_ID, SESSION_ID } from "./agent.js";

const [command, dbFile, workDir, reason] = process.argv.slice(2);
if (!command || !dbFile || !workDir) {
  process.stderr.write("usage: main.js <run|resume|resolve> <db file> <work dir> [reason]\n");
  process.exit(64);
}
const store = await openStore(`sqlite:${dbFile}`);
try {
  if (command === "resolve") {
    // What `agent-ledger resolve <session> <attemptId> --abandon "reason"` does, as code.
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: SESSION_ID,
      runId: RUN_ID,
      actor: { type: "human", id: "operator" },
    });
    for (const attempt of (await inspectSession(store, SESSION_ID)).unresolved) {
      await recorder.abandon(
        {
          stepId: attempt.stepId,
          attemptId: attempt.attemptId,
          requestedEventId: attempt.requestEventId,
          ...(attempt.toolCallId ? { toolCallId: attempt.toolCallId } : {}),
        },
        reason ?? "abandoned by an operator",
      );
      process.stdout.write(`ABANDONED ${attempt.attemptId}\n`);
    }
  } else {
    const { agent, handler, config } = buildAgent({ store, workDir });
    const input =
      command === "run"
        ? { messages: [{ role: "user", content: "Email Bob, then check the weather in Paris." }] }
        : null;
    try {
      const result = await agent.invoke(input, config);
      const final = String(result.messages.at(-1)?.content);
      await handler.completeRun({ final });
      process.stdout.write(`FINAL ${JSON.stringify(final)}\n`);
    } catch (error) {
      const unresolved = findLedgerError(error, "unresolved-attempt");
      if (!unresolved) throw error;
      process.stdout.write(`UNRESOLVED ${String(unresolved.details.attemptId)}\n`);
      process.exitCode = 3;
    }
  }
} finally {
  await store.close();
}
