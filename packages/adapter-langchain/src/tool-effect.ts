import type { ToolEffect } from "@agent-ledger/core";

const KINDS = new Set<ToolEffect["kind"]>(["none", "read", "write", "unknown"]);

/**
 * A tool's effect from its metadata: `metadata: { idempotent: true }` lets a call that was in
 * flight at a crash run again on resume; `metadata: { effect: "read" }` sets the kind.
 */
export function toolEffect(metadata: Record<string, unknown> | undefined): ToolEffect {
  const kind = metadata?.effect;
  return {
    kind:
      typeof kind === "string" && KINDS.has(kind as ToolEffect["kind"])
        ? (kind as ToolEffect["kind"])
        : "unknown",
    idempotent: metadata?.idempotent === true,
  };
}

/**
 * A retriever's effect: a read that may run again, unless its metadata declares otherwise
 * (`effect: "write"`, `idempotent: false`).
 */
export function retrieverEffect(metadata: Record<string, unknown> | undefined): ToolEffect {
  const declared = toolEffect(metadata);
  return {
    kind: metadata?.effect === undefined ? "read" : declared.kind,
    idempotent: metadata?.idempotent !== false,
  };
}
