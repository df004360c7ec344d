/**
 * What the model reads as the result of a tool call a person abandoned, before the person's
 * reason: the call did not finish (its process died, or the run was aborted while it ran) and
 * will not run again. It said "interrupted by a crash", which was not so after an abort.
 */
export const ABANDONED_CALL =
  "This tool call did not finish (a crash or an abort cut it off) and was not run again: ";

/** The ToolMessage content of a tool call abandoned for `reason`. */
export function abandonedCallText(reason: string): string {
  return `${ABANDONED_CALL}${reason}`;
}
