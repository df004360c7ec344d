// A child process for the SIGKILL tests: a two-step chat, recorded in the SQLite ledger at
// argv[2], whose second tool call never returns. It prints IN_TOOL once that call's
// tool.requested is committed; the test kills it there. The provider numbers tool calls per
// response (call_0 on both steps), as some OpenAI-compatible servers do.
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { CRASHED_CHAT, IN_TOOL } from "./crashing-chat.test.data.js";
import {
  assistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

const path = process.argv[2];
if (!path) throw new Error("usage: crashing-chat.test.child.js <sqlite file>");
const store = new SqliteEventStore({ path });
await store.init();
const recorder = new SessionRecorder({ store, ...CRASHED_CHAT, actor: assistant });
const { model } = scriptedModel([
  toolCallsResult(toolCall("call_0", "lookup", { key: "a" })),
  toolCallsResult(toolCall("call_0", "send", { to: "bob" })),
  textResult("done"),
]);
const tools = wrapTools(
  {
    lookup: tool({
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }) => key.toUpperCase(),
    }),
    send: tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async (): Promise<string> => {
        process.stdout.write(`${IN_TOOL}\n`);
        return new Promise(() => undefined);
      },
    }),
  },
  { recorder },
);
await generateText({
  model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
  prompt: "look up a, then tell bob",
  tools,
  stopWhen: stepCountIs(5),
});
