// Values as the page writes them, in the words `agent-ledger inspect` uses.

// Counts with thousands separators ("4,999"). One formatter for the page: toLocaleString makes
// one per call, which was a sixth of the page's own time drawing a chain of 5,000 runs.
const COUNT_FORMAT = new Intl.NumberFormat("en-US");

export function countText(number) {
  return COUNT_FORMAT.format(number);
}

// "1 run", "2,000 runs": a count and its noun, singular for one.
export function counted(number, noun) {
  return `${countText(number)} ${noun}${number === 1 ? "" : "s"}`;
}

// "12 ms", "1.4 s", "3 m 04 s", "2 h 05 m": inspect's formatDuration (format.ts), rule for rule
// (format-parity.test.ts holds them to it).
export function duration(ms) {
  if (ms === undefined || ms === null || !Number.isFinite(ms)) return "";
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600)
    return `${Math.floor(seconds / 60)} m ${String(seconds % 60).padStart(2, "0")} s`;
  const minutes = Math.round(seconds / 60);
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} m`;
}

// "1200 in (300 cached) / 85 out tokens", as inspect prints it (tokensText in
// render-inspection.ts): what the calls reported, empty when nothing.
export function tokens(usage) {
  if (!usage) return "";
  const parts = [];
  if (Number.isFinite(usage.inputTokens))
    parts.push(
      `${usage.inputTokens} in${usage.cachedTokens ? ` (${usage.cachedTokens} cached)` : ""}`,
    );
  if (Number.isFinite(usage.outputTokens)) parts.push(`${usage.outputTokens} out`);
  return parts.length > 0 ? `${parts.join(" / ")} tokens` : "";
}

export function preview(value, max = 80) {
  if (value === undefined || value === null) return "";
  // Long content as the list holds it (stored): a blob reference, read when selected.
  if (typeof value === "object" && typeof value.$ledger === "string" && "ref" in value)
    return `[${value.$ledger} in the blob store: select the event]`;
  const text = (typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// A fork copies attemptIds into another run: an attempt is named by its run and its id.
export function attemptKey(attempt) {
  return `${attempt.runId}\n${attempt.attemptId}`;
}

// Why a run stopped, in a line (render-inspection's resultText).
export function runResultText(result) {
  if (typeof result !== "object" || result === null) return result;
  if (typeof result.error === "object" && result.error !== null)
    return `${result.error.name ?? "Error"}: ${result.error.message ?? ""}`;
  if (typeof result.reason === "string") return result.reason;
  return result;
}

// What a call that did not complete left: its error's message, or the outcome itself.
export function outcomeText(outcome) {
  return typeof outcome === "object" && outcome !== null && "message" in outcome
    ? outcome.message
    : outcome;
}

// The page of sessions with something open (open-sessions.js): the sessions list links to it.
export const OPEN_LINK = "#/open";

export function sessionHref(sessionId) {
  return `#/session/${encodeURIComponent(sessionId)}`;
}

// "2 unresolved, 1 paused, 1 open run": the non-zero counts of a session with something open,
// as `sessions --unresolved` writes them (open-work.ts; format-parity.test.ts holds them to it).
export function openWorkText(work) {
  const parts = [];
  if (work.unresolved > 0) parts.push(`${work.unresolved} unresolved`);
  if (work.paused > 0) parts.push(`${work.paused} paused`);
  if (work.openRuns > 0) parts.push(`${work.openRuns} open run${work.openRuns === 1 ? "" : "s"}`);
  return parts.join(", ");
}
