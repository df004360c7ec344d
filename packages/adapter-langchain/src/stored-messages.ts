import type { JsonValue } from "@agent-ledger/core";
import {
  type BaseMessage,
  mapStoredMessagesToChatMessages,
  type StoredMessage,
} from "@langchain/core/messages";
import { isRecord } from "./plain-json.js";

/** Rebuilds a message stored as `{ type, data }` (see `messageToJson`); undefined otherwise. */
export function messageFromJson(value: JsonValue | undefined): BaseMessage | undefined {
  if (!isRecord(value) || typeof value.type !== "string" || !isRecord(value.data)) return undefined;
  const data = value.data;
  if (!("content" in data)) return undefined;
  const [message] = mapStoredMessagesToChatMessages([
    {
      type: value.type,
      data: { role: undefined, name: undefined, ...data },
    } as unknown as StoredMessage,
  ]);
  return message;
}
