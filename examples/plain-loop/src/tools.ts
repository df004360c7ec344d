import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { ToolEffect } from "@agent-ledger/core";

export interface ToolContext {
  workDir: string;
  toolCallId: string;
  /** Called when the tool has started, before its slow part (the demo kills the process there). */
  onStarted: () => void;
}

export interface ToolDefinition {
  effect: ToolEffect;
  run: (args: Record<string, string>, context: ToolContext) => Promise<string>;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The tools of the plain loop. Side effects are lines in files a person can look at. */
export const tools: Record<string, ToolDefinition> = {
  lookup_weather: {
    effect: { kind: "read", idempotent: true },
    async run(args, context) {
      context.onStarted();
      await pause(20);
      return `${args.city}: sunny, 24°C`;
    },
  },
  send_email: {
    // Sending twice would email the team twice: not idempotent.
    effect: { kind: "write", idempotent: false },
    async run(args, context) {
      context.onStarted();
      await pause(20);
      appendFileSync(
        `${context.workDir}/outbox.log`,
        `${context.toolCallId} to=${args.to} subject=${args.subject}\n`,
      );
      return "sent";
    },
  },
  write_note: {
    // Keyed by the tool call id, so running it again after a crash writes the note once.
    effect: { kind: "write", idempotent: true },
    async run(args, context) {
      context.onStarted();
      await pause(1500);
      const path = `${context.workDir}/notes.log`;
      const line = `${context.toolCallId} ${args.text}\n`;
      if (!(existsSync(path) && readFileSync(path, "utf8").includes(`${context.toolCallId} `)))
        appendFileSync(path, line);
      return "noted";
    },
  },
};
