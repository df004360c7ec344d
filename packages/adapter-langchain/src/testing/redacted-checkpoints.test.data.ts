import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type EventStore, type JsonValue, SessionRecorder } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { z } from "zod";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashAfterCommit, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "redacted-session";
export const RUN = "redacted-run";
export const SECRET = "sk-live-7Qx2Lm9Rt4";
export const EMAIL = "jane.doe@example.com";

/** A redact function as the core README has it: every string of a payload loses both. */
export function scrub(value: JsonValue): JsonValue {
  if (typeof value === "string")
    return value.replaceAll(SECRET, "[key]").replaceAll(EMAIL, "[email]");
  if (Array.isArray(value)) return value.map(scrub);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, scrub(item)]));
}

/** LangGraph's own serde, its bytes sealed with AES-256-GCM (the app's key, not in the ledger). */
export function encryptingSerde(key: Buffer): SerializerProtocol {
  const inner = new JsonPlusSerializer();
  return {
    async dumpsTyped(value) {
      const [type, bytes] = await inner.dumpsTyped(value);
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(bytes), cipher.final()]);
      return [type, new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), sealed]))];
    },
    async loadsTyped(type, bytes) {
      const data = Buffer.from(bytes);
      const decipher = createDecipheriv("aes-256-gcm", key, data.subarray(0, 12));
      decipher.setAuthTag(data.subarray(12, 28));
      const opened = Buffer.concat([decipher.update(data.subarray(28)), decipher.final()]);
      return inner.loadsTyped(type, new Uint8Array(opened));
    },
  };
}

/**
 * One process's agent: the user's message, `lookup`'s result and the answer carry the key and
 * the email; its recorder redacts them with `scrub`: the `recorder` given, or (`store`) those
 * the handler opens on the run with its own `redact: scrub`. Its saver seals with `serde`
 * (default: LangGraph's, as the saver has it). With `crash`, the process dies in its second
 * model call, the one that reads `lookup`'s result. `read` gets each prompt the model is given.
 */
export function redactedAgent(
  ledger: { recorder: SessionRecorder } | { store: EventStore },
  options: {
    serde?: SerializerProtocol;
    crash?: boolean;
    read?: (prompt: string) => void;
  },
) {
  const lookup = tool(
    async ({ email }: { email: string }) => {
      noteEffect("lookup");
      return `key of ${email}: ${SECRET}`;
    },
    {
      name: "lookup",
      description: "the customer's key",
      schema: z.object({ email: z.string() }),
      metadata: { idempotent: true },
    },
  );
  const answer = (messages: BaseMessage[]) => {
    options.read?.(JSON.stringify(messages.map((message) => message.content)));
    if (!messages.some((message) => ToolMessage.isInstance(message)))
      return new AIMessage({
        content: "",
        tool_calls: [{ id: "call-1", name: "lookup", args: { email: EMAIL } }],
      });
    return options.crash ? crashHere() : new AIMessage(`sent ${SECRET} to ${EMAIL}`);
  };
  const store = "recorder" in ledger ? ledger.recorder.store : ledger.store;
  const checkpointer = new LedgerCheckpointSaver({
    store,
    ...(options.serde ? { serde: options.serde } : {}),
  });
  const { handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    ...("recorder" in ledger ? { recorder: ledger.recorder } : { redact: scrub }),
    tools: [lookup],
    answer,
    checkpointer,
  });
  const config = threadConfig(handler);
  return { invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config) };
}

export const USER_MESSAGE = {
  messages: [{ role: "user", content: `I am ${EMAIL}, key ${SECRET}` }],
};

/** The recorder of the run, redacting with `scrub`. */
export function scrubbingRecorder(store: EventStore): SessionRecorder {
  const actor = { type: "agent", id: "support" } as const;
  return new SessionRecorder({ store, sessionId: SESSION, runId: RUN, actor, redact: scrub });
}

export const redactedCheckpointsCrashes = {
  /** The first process, its saver sealing with the key given in hex: dies reading the result. */
  "redacted-checkpoints": async (store, [key]) => {
    const serde = encryptingSerde(Buffer.from(key ?? "", "hex"));
    const first = redactedAgent({ recorder: scrubbingRecorder(store) }, { serde, crash: true });
    await first.invoke(USER_MESSAGE);
  },
  /**
   * The first process on the handler's store form (`redact: scrub`), its saver sealing with the
   * key given in hex: dies once `lookup`'s result is committed, before LangGraph saves the
   * tools node's write (a resume runs that node again).
   */
  "redacted-store-form": async (store, [key]) => {
    const serde = encryptingSerde(Buffer.from(key ?? "", "hex"));
    const crashing = crashAfterCommit(store, (event) => event.type === "tool.completed");
    await redactedAgent({ store: crashing }, { serde }).invoke(USER_MESSAGE);
  },
} satisfies Record<string, CrashScenario>;
