import { openStore } from "@agent-ledger/core";
import { runAgent } from "./agent.js";

// A child process for the crash tests (and a runnable demo):
//   node dist/main.js <sqlite-file> <runId> <generate|stream> <new|resume> <callLog> <effectLog> [crash-at]
// crash-at: `tool:<name>` or `stream`: print IN_TOOL / IN_STREAM and hang until killed.
const [file, runId, mode, start, callLog, effectLog, crashAt] = process.argv.slice(2);
if (!file || !runId || !callLog || !effectLog || (mode !== "generate" && mode !== "stream")) {
  console.error(
    "usage: main.js <sqlite-file> <runId> <generate|stream> <new|resume> <callLog> <effectLog> [crash-at]",
  );
  process.exit(2);
}
const hang = (signal: string) => {
  process.stdout.write(`${signal}\n`);
  return new Promise<void>(() => setInterval(() => undefined, 1000));
};
const store = await openStore(`sqlite:${file}`);
try {
  const result = await runAgent({
    store,
    sessionId: "order-42",
    runId,
    resume: start === "resume",
    mode,
    callLog,
    effectLog,
    inTool: async (name) => {
      if (crashAt === `tool:${name}`) await hang("IN_TOOL");
    },
    inStream: async () => {
      if (crashAt === "stream") await hang("IN_STREAM");
    },
  });
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
} catch (error) {
  const code = (error as { code?: string }).code;
  process.stdout.write(
    `ERROR ${JSON.stringify({ code, message: String((error as Error).message) })}\n`,
  );
  process.exitCode = 1;
} finally {
  await store.close();
}
