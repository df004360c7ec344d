import {
  type AttemptView,
  type EndedOuterCall,
  type OuterCallEnd,
  toolCallLabel,
} from "@agent-ledger/core";
import { shellQuote } from "./format.js";

// The placeholder inspect prints in its commands, which resolve refuses.
const PLACEHOLDER = "reason";

/**
 * The next step of a call in flight inside a tool call that ended (core's `endedOuterCalls`):
 * settling that call abandons this one, which is never made again and is not a person's to
 * decide. For an abandoned call, `command` is `resolve --abandon` run again on it, which settles
 * what it left in flight at once; otherwise the next resume of its agent does it.
 */
export interface SettledWithOuterStep {
  action: "settled-with-outer";
  /** The tool call that ended: its run and (last) attempt, name and tool call id. */
  runId: string;
  attemptId: string;
  name?: string;
  toolCallId?: string;
  ended: OuterCallEnd;
  command?: string;
  /** As on a `resolve` step: `command` shows the store URL's password as `***`. */
  passwordLeftOut?: true;
}

function endedText(ended: OuterCallEnd): string {
  return ended === "abandoned" ? "was abandoned" : ended;
}

/**
 * `resolve --abandon` run again on the abandoned call `outer`: the reason it was abandoned with
 * (resolve settles with the recorded one, whatever is given), its run named (a fork copies an
 * abandoned attempt into another run), `store` being ` --store <url>` or empty.
 */
function resolveAgain(sessionId: string, outer: AttemptView, store: string): string {
  const recorded = typeof outer.outcome === "string" ? outer.outcome.trim() : "";
  const reason =
    recorded === "" || recorded.toLowerCase() === PLACEHOLDER ? "again" : (outer.outcome as string);
  return `agent-ledger resolve --abandon ${shellQuote(reason)} --run=${shellQuote(outer.runId)}${store} -- ${shellQuote(sessionId)} ${shellQuote(outer.attemptId)}`;
}

/** The step of a call `outer` holds; `store` as for the printed commands (` --store <url>`). */
export function settledWithOuterStep(
  sessionId: string,
  outer: EndedOuterCall,
  store: { option: string; passwordLeftOut: boolean },
): SettledWithOuterStep {
  const { attempt, ended } = outer;
  return {
    action: "settled-with-outer",
    runId: attempt.runId,
    attemptId: attempt.attemptId,
    ...(attempt.name === undefined ? {} : { name: attempt.name }),
    ...(attempt.toolCallId === undefined ? {} : { toolCallId: attempt.toolCallId }),
    ended,
    ...(ended === "abandoned"
      ? {
          command: resolveAgain(sessionId, attempt, store.option),
          ...(store.passwordLeftOut ? { passwordLeftOut: true as const } : {}),
        }
      : {}),
  };
}

/**
 * The step as `inspect` says it, in parts: the words `before` the command that settles it now
 * (when one does), and `after` it; the viewer shows the command as a block to copy between them.
 */
export function settledWithOuterParts(step: SettledWithOuterStep): {
  before: string;
  command?: string;
  after: string;
} {
  const said = `nothing to decide: settled with its ${toolCallLabel(step)}, which ${endedText(step.ended)}: `;
  return step.command === undefined
    ? {
        before: `${said}the next resume settles it (abandons it: its answer was never recorded)`,
        after: "",
      }
    : {
        before: `${said}run `,
        command: step.command,
        after: " again to settle it now, or the next resume does",
      };
}

/** The step as `agent-ledger inspect` prints it under the call. */
export function settledWithOuterText(step: SettledWithOuterStep): string {
  const { before, command, after } = settledWithOuterParts(step);
  return `next: ${before}${command ?? ""}${after}`;
}

/**
 * Why `resolve` refuses to decide `attempt`, held by `outer`: the decision would be dropped (an
 * approval) or is not this call's to make (settling `outer` abandons it with its reason).
 */
export function settledWithOuterRefusal(
  sessionId: string,
  attempt: AttemptView,
  outer: EndedOuterCall,
  store: { option: string; passwordLeftOut: boolean },
): string {
  const step = settledWithOuterStep(sessionId, outer, store);
  const where = `${toolCallLabel(step)} (attempt ${step.attemptId} on run ${step.runId}), which ${endedText(step.ended)}`;
  const instead =
    step.command === undefined
      ? "the next resume of its agent settles it (abandons it: its answer was never recorded), and nothing a person decides on it would be kept"
      : `to settle it now, run ${step.command} again${step.passwordLeftOut ? " (with the store URL's password, shown as ***, put back)" : ""}; the next resume of its agent does it too`;
  return `attempt ${attempt.attemptId} is in flight inside ${where}: it will not be made again, and settling that tool call abandons it; ${instead}`;
}
