// A child of zombie-thread.test.ts: one process of the agent of zombie-thread.test.data.ts on the
// SQLite ledger at argv[2]. `fresh` runs it from the start and pauses (until SIGCONT) once its
// first tool call is recorded as ended, before LangGraph saves that step: the test
// stops it there (SIGSTOP), as a worker taken for dead. `fresh-mid-tool` pauses earlier, once
// that call's request is recorded, before the tool runs. `resume` goes on with the thread. It
// prints one JSON line per thing it does (`effect`, `paused`) and how it ended.
// Usage: zombie-thread.test.child.js <sqlite file> fresh|fresh-mid-tool|resume
import type { AppendRequest } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { threadConfig } from "./helpers.js";
import { say, zombieAgent } from "./zombie-thread.test.data.js";

const [path, mode] = process.argv.slice(2);
if (path === undefined || (mode !== "fresh" && mode !== "fresh-mid-tool" && mode !== "resume"))
  throw new Error("usage: zombie-thread.test.child.js <sqlite file> fresh|fresh-mid-tool|resume");

const store = new SqliteEventStore({ path });
await store.init();
if (mode !== "resume") {
  // Paused once, when the first tool call's task has its end recorded (the handler's last write
  // of that step): LangGraph has yet to save the step's writes and its next checkpoint. Mid
  // tool: when that call's request is recorded; the tool has yet to run.
  const append = store.append.bind(store);
  let toolRan = false;
  let paused = false;
  store.append = async (request: AppendRequest) => {
    const stored = await append(request);
    if (request.events.some((event) => event.type === "tool.completed")) toolRan = true;
    const ended = request.events.some((event) => event.type === "x.langchain.chain.completed");
    const requested = request.events.some((event) => event.type === "tool.requested");
    if (!paused && (mode === "fresh-mid-tool" ? requested : toolRan && ended)) {
      paused = true;
      const alive = setInterval(() => {}, 1000);
      const resumed = new Promise((resolve) => process.once("SIGCONT", resolve));
      say({ paused: true });
      await resumed;
      clearInterval(alive);
    }
    return stored;
  };
}
const { agent, handler } = zombieAgent(store);
try {
  const input = mode === "resume" ? null : { messages: [{ role: "user", content: "go" }] };
  const result = await agent.invoke(input, threadConfig(handler));
  say({ finished: String(result.messages.at(-1)?.content) });
} catch (error) {
  const { code, name, message } = error as { code?: string; name: string; message: string };
  say({ error: { code, name, message } });
}
await store.close();
