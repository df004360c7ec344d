import { userInfo } from "node:os";

/** The human a CLI write is recorded as: `--actor`, else the login name. */
export function humanActor(
  flag: string | undefined,
  env: Record<string, string | undefined>,
): { type: "human"; id: string } {
  if (flag !== undefined) return { type: "human", id: flag };
  try {
    return { type: "human", id: env.USER ?? userInfo().username };
  } catch {
    return { type: "human", id: "agent-ledger-cli" };
  }
}
