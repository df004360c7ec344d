import { appendFileSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { Command, interrupt } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashAfterCommit, crashHere } from "./crash-point.js";
import { threadConfig } from "./helpers.js";

export const SESSION = "s1";
export const RUN = "run-1";

/** Whom the model emails: one call, or two in one turn (parallel tool calls). */
export type Recipients = "one" | "two";

/**
 * One process's agent: createAgent whose model asks `send_email` (not idempotent) for each
 * recipient, then answers with the ToolMessages it got. Each email sent is a line in the file
 * `sent`. With `crash`, the process dies inside send_email once every call of the turn is in
 * it (each sent its email). `modelSaw`: the ToolMessages the model was given, as `name: content`.
 * `onUnresolved` is the middleware's option (undefined: the default). With `confirmsFirst`,
 * send_email asks a person through its own `interrupt()` before it sends.
 */
export function emailAgent(
  store: EventStore,
  sent: string,
  options: {
    recipients?: Recipients;
    crash?: boolean;
    onUnresolved?: "interrupt" | "throw";
    checkpointer?: "ledger" | "none";
    confirmsFirst?: boolean;
  } = {},
) {
  const { recipients = "one", crash = false, onUnresolved = "interrupt" } = options;
  const expected = recipients === "two" ? 2 : 1;
  let inTool = 0;
  const send = tool(
    async ({ to }: { to: string }) => {
      if (options.confirmsFirst) interrupt({ confirm: `email ${to}?` });
      appendFileSync(sent, `sent to ${to}\n`);
      if (crash) {
        inTool++;
        // The last call in dies with the others in flight (each waits for the crash).
        return inTool === expected ? crashHere() : new Promise<never>(() => {});
      }
      return `sent to ${to}`;
    },
    {
      name: "send_email",
      description: "sends an email",
      schema: z.object({ to: z.string() }),
      metadata: { effect: "write" },
    },
  );
  const modelSaw: string[] = [];
  const decide = (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: (recipients === "two" ? ["ann", "bob"] : ["ann"]).map((to) => ({
          id: `call-${to}`,
          name: "send_email",
          args: { to },
        })),
      });
    for (const result of results) modelSaw.push(`${result.name}: ${String(result.content)}`);
    return new AIMessage(`Done: ${results.map((result) => String(result.content)).join(" | ")}`);
  };
  const model = fakeModel();
  for (let call = 0; call < 4; call++) model.respond(decide);
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const agent = createAgent({
    model,
    tools: [send],
    middleware: [
      ledgerMiddleware(
        onUnresolved === "throw" ? { handler } : { handler, onUnresolved: "interrupt" },
      ),
    ],
    ...(options.checkpointer === "none"
      ? {}
      : { checkpointer: new LedgerCheckpointSaver({ store }) }),
  });
  const config = threadConfig(handler);
  return {
    handler,
    modelSaw,
    start: () => agent.invoke({ messages: [new HumanMessage("email them")] }, config),
    /** Resumes the thread (`null`, or a Command with the person's answer), as the app would. */
    resume: (input: null | Command) =>
      agent.invoke(input, config).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      ),
  };
}

export const unresolvedInterruptCrashes = {
  /** Dies inside send_email; args: the sent log, "one" or "two" recipients. */
  "unresolved-interrupt:start": async (store, [sent, recipients]) => {
    await emailAgent(store, String(sent), {
      recipients: recipients as Recipients,
      crash: true,
    }).start();
  },
  /**
   * send_email asks its own interrupt() first: the agent pauses there, is resumed with "yes",
   * and dies inside send_email.
   */
  "unresolved-interrupt:confirmed": async (store, [sent]) => {
    const agent = emailAgent(store, String(sent), { crash: true, confirmsFirst: true });
    await agent.start();
    const outcome = await agent.resume(new Command({ resume: "yes" }));
    if ("error" in outcome) throw outcome.error;
  },
  /**
   * Resumes the crashed thread with a person's answer (the JSON in args[2]) to its interrupt,
   * and dies where args[1] says: `after-decision`, once the decision is committed (before the
   * tool runs again); `in-tool`, inside the tool run again.
   */
  "unresolved-interrupt:answer": async (store, [sent, crashAt, answer]) => {
    const crashing =
      crashAt === "after-decision"
        ? crashAfterCommit(store, (event) => event.type.startsWith("attempt."))
        : store;
    const { resume } = emailAgent(crashing, String(sent), { crash: crashAt === "in-tool" });
    const outcome = await resume(new Command({ resume: JSON.parse(String(answer)) }));
    if ("error" in outcome) throw outcome.error;
  },
} satisfies Record<string, CrashScenario>;
