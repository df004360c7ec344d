import { AsyncLocalStorage } from "node:async_hooks";
import { isValidId } from "@agent-ledger/core";
import type { ToolRun } from "./run-tree.js";
import { toolCallKey } from "./tool-call-key.js";

/**
 * A tool call's id as the ledger can keep it. Some models give an empty id (Gemini's
 * OpenAI-compatible API, LM Studio), which is no ledger id: such a call is recorded, matched on
 * resume and claimed like a call without an id (by name and order).
 */
export function ledgerToolCallId(id: string | undefined): string | undefined {
  return id !== undefined && isValidId(id) ? id : undefined;
}

/**
 * A tool call without an id that `ledgerMiddleware` records itself. Its claim cannot be keyed
 * by toolCallId, so it travels with the async context of the middleware's `next()`: the first
 * id-less tool start inside it is the wrapped tool (a tool that tool then calls is not).
 */
const unnamedClaims = new AsyncLocalStorage<UnnamedClaim>();

/** The call `ledgerMiddleware` committed for a tool start it claims: its run but its id. */
export type ClaimedCall = Omit<ToolRun, "langchainToolCallId">;

interface UnnamedClaim {
  taken: boolean;
  call: ClaimedCall;
}

/** Runs the wrapped tool with its id-less tool start claimed by the middleware. */
export function runWithUnnamedClaim<T>(call: ClaimedCall, run: () => Promise<T>): Promise<T> {
  return unnamedClaims.run({ taken: false, call }, run);
}

/** The claim (once) inside `runWithUnnamedClaim`: this id-less tool start is the middleware's. */
export function takeUnnamedClaim(): ClaimedCall | undefined {
  const claim = unnamedClaims.getStore();
  if (!claim || claim.taken) return undefined;
  claim.taken = true;
  return claim.call;
}

/**
 * Tool calls `ledgerMiddleware` records itself (the handler then leaves them alone), by thread
 * and toolCallId, with the `tool.requested` the middleware committed for each.
 */
export class ToolClaims {
  readonly #claimed = new Map<string, ClaimedCall>();

  /** How many claims it keeps (see `keptBy`). */
  get kept(): number {
    return this.#claimed.size;
  }

  /** Claims the call; returns the release. */
  claim(threadId: string | undefined, toolCallId: string, call: ClaimedCall): () => void {
    const key = toolCallKey(threadId, toolCallId);
    this.#claimed.set(key, call);
    return () => this.#claimed.delete(key);
  }

  /** The claim on this call, if the middleware records it. */
  find(threadId: string | undefined, toolCallId: string): ClaimedCall | undefined {
    return this.#claimed.get(toolCallKey(threadId, toolCallId));
  }
}
