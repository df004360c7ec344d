import { appendFileSync } from "node:fs";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

/** Stops inside a tool (for the crash test): tell the parent, then wait to be killed. */
async function crashPoint(name: string): Promise<void> {
  if (process.env.CRASH_IN !== name) return;
  process.stdout.write(`INSIDE ${name}\n`);
  await new Promise(() => setInterval(() => {}, 1000));
}

/** A tool with a visible side effect (a line per email in a file): NOT idempotent. */
export function sendEmailTool(outbox: string) {
  return tool(
    async ({ to, body }: { to: string; body: string }) => {
      appendFileSync(outbox, `${JSON.stringify({ to, body })}\n`);
      await crashPoint("send_email");
      return `email sent to ${to}`;
    },
    {
      name: "send_email",
      description: "Send an email",
      schema: z.object({ to: z.string(), body: z.string() }),
      metadata: { idempotent: false, effect: "write" },
    },
  );
}

/** A read-only tool, declared idempotent: it may run again after a crash. */
export function weatherTool(log: string) {
  return tool(
    async ({ city }: { city: string }) => {
      appendFileSync(log, `${city}\n`);
      await crashPoint("get_weather");
      return `sunny in ${city}`;
    },
    {
      name: "get_weather",
      description: "Current weather of a city",
      schema: z.object({ city: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
}
