import type { EventStore } from "../store/event-store.js";
import { ledgerCommand } from "../store/store-command.js";

/** How a person uses `abandonCommand`, said after it. */
export const ABANDON_COMMAND_USE =
  '(what you found in place of "reason"; --approve in place of --abandon approves it)';

/**
 * `agent-ledger resolve --abandon "reason"` on attempt `attemptId` of session `sessionId`, as a
 * person pastes it into a shell, as inspect prints it: the run's store named where it describes
 * itself by a URL (`ledgerCommand`; `store` undefined where the caller has none at hand, which
 * the command then says). "reason" is the placeholder the CLI refuses as a reason: pasted
 * unedited, the command writes nothing.
 */
export function abandonCommand(
  store: EventStore | undefined,
  attempt: { sessionId: string; attemptId: string },
): string {
  return ledgerCommand(store, 'resolve --abandon "reason"', [attempt.sessionId, attempt.attemptId]);
}
