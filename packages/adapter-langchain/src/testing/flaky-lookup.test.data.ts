import { type EventStore, inspectSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { crashHere, noteEffect } from "./crash-point.js";

/**
 * A `lookup` tool that throws on its first `failures` runs (the network was down, or the
 * error `failWith` makes for the run), then answers; declared idempotent or not. In a crash child (`inChild`), each run is noted as the
 * effect "lookup", and with `crashOnRun` the process dies inside that run.
 */
export function flakyLookup(options: {
  idempotent: boolean;
  failures: number;
  crashOnRun?: number;
  inChild?: boolean;
  failWith?: (run: number) => Error;
}) {
  const runs = { count: 0 };
  const lookup = tool(
    async ({ q }: { q: string }) => {
      runs.count++;
      if (options.inChild) noteEffect("lookup");
      if (runs.count === options.crashOnRun) return crashHere();
      if (runs.count <= options.failures)
        throw options.failWith?.(runs.count) ?? new Error(`network down (${runs.count})`);
      return `found ${q}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ q: z.string() }),
      metadata: options.idempotent ? { idempotent: true } : {},
    },
  );
  return { runs, lookup };
}

/** The model: asks for `lookup` once, then answers with what it got. */
export function askForLookup(messages: BaseMessage[]): AIMessage {
  const result = messages.findLast((message) => ToolMessage.isInstance(message));
  if (!result)
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call-1", name: "lookup", args: { q: "x" } }],
    });
  return new AIMessage(`done: ${String(result.content)}`);
}

/**
 * The tool attempts of the session's first run, in order: the step (its index among the run's
 * steps), the status, and the attempt each retried (its index in this list), or null.
 */
export async function toolAttempts(store: EventStore, sessionId: string) {
  const inspection = await inspectSession(store, sessionId);
  const steps = inspection.runs[0]?.steps ?? [];
  const attempts = steps.flatMap((step, index) =>
    step.attempts
      .filter((attempt) => attempt.kind === "tool")
      .map((attempt) => ({ ...attempt, step: index })),
  );
  return attempts.map((attempt) => ({
    step: attempt.step,
    status: attempt.status,
    retried:
      attempt.retryOf === undefined
        ? null
        : attempts.findIndex((other) => other.attemptId === attempt.retryOf),
  }));
}
