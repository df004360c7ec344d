import type { HandoffKind } from "./handoff-agents.js";

/** What each child of handoff-crash.test.child.ts runs, and the side effect it dies right after. */
export const HANDOFF_CRASHES = {
  "callback: dies inside charge": { kind: "callback", asTool: false, diesAfter: "charge 7" },
  "callback: dies inside the callback": {
    kind: "callback",
    asTool: false,
    diesAfter: "ticket opened",
  },
  "idempotent callback: dies inside the callback": {
    kind: "idempotent callback",
    asTool: false,
    diesAfter: "ticket opened",
  },
  "no callback: dies inside charge": { kind: "no callback", asTool: false, diesAfter: "charge 7" },
  "plain agent: dies inside charge": { kind: "plain agent", asTool: false, diesAfter: "charge 7" },
  "front as a tool, callback: dies inside charge": {
    kind: "callback",
    asTool: true,
    diesAfter: "charge 7",
  },
} satisfies Record<string, { kind: HandoffKind; asTool: boolean; diesAfter: string }>;

export type HandoffCrash = keyof typeof HANDOFF_CRASHES;

export function isHandoffCrash(name: string): name is HandoffCrash {
  return Object.hasOwn(HANDOFF_CRASHES, name);
}
