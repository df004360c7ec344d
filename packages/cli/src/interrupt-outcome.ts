import { preview } from "./format.js";

// A LangGraph tool that pauses at `interrupt()` ends its call by throwing GraphInterrupt, which
// the LangChain adapter records as `tool.failed` (replay reads that: the tool runs again when
// the graph resumes). Nothing failed: the graph waits for a person's answer. Its message is the
// interrupts as JSON (`[{ "value": ..., "id": ... }]`): the values are what the person is asked.
const INTERRUPTS = new Set(["GraphInterrupt", "NodeInterrupt"]);

/**
 * The text of an attempt that paused at `interrupt()` (`paused at interrupt(<value>)`, the value
 * cut short), or undefined when `outcome` is no interrupt.
 */
export function interruptText(outcome: unknown): string | undefined {
  if (typeof outcome !== "object" || outcome === null) return undefined;
  const { name, message } = outcome as { name?: unknown; message?: unknown };
  if (typeof name !== "string" || !INTERRUPTS.has(name)) return undefined;
  return `paused at interrupt(${preview(interruptValues(message), 60)})  (recorded as failed: ${name}; it runs again when the graph resumes)`;
}

/** The interrupts' values, from the message; the message itself when it is not their JSON. */
function interruptValues(message: unknown): unknown {
  if (typeof message !== "string") return message;
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return message;
  }
  if (!Array.isArray(parsed)) return parsed;
  const values = parsed.map((interrupt: unknown) =>
    typeof interrupt === "object" && interrupt !== null && "value" in interrupt
      ? (interrupt as { value: unknown }).value
      : interrupt,
  );
  return values.length === 1 ? values[0] : values;
}
