/** An agent call's effect that the next resume makes again by itself. */
export const MADE_AGAIN = { kind: "none", idempotent: true } as const;
