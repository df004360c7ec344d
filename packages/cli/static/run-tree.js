// The run tree: each run with its status, duration and cause, its attempts (retries marked ↻)
// with child runs under the call that caused them, a bar per row on the session's timeline,
// and the pause of a run paused awaiting a decision last under it, as `inspect` prints it.
import { el, reasonSpan } from "./dom.js";
import { attemptKey, attemptName, duration, outcomeText, runResultText } from "./format.js";

// The paused run each run waits with: a run paused awaiting a decision, and every run under it
// (their agents are the ones waiting), by runId (paused-runs.ts's pausedAbove).
export function pausedAbove(runs, paused = undefined, above = new Map()) {
  for (const run of runs) {
    const own = run.awaitingDecision ? run.runId : paused;
    if (own !== undefined) above.set(run.runId, own);
    pausedAbove(run.children, own, above);
  }
  return above;
}

export function flattenRuns(runs, depth = 0, out = []) {
  for (const run of runs) {
    out.push({ run, depth });
    flattenRuns(run.children, depth + 1, out);
  }
  return out;
}

/**
 * A run's status as the page shows it: a running run paused awaiting a decision (`pausedRunOf`,
 * from pausedAbove) is not a crash, nor is any run under it: "paused".
 */
export function shownStatus(run, pausedRunOf) {
  return run.status === "running" && pausedRunOf.has(run.runId) ? "paused" : run.status;
}

/** A bar on the timeline from `t0` to `t1` (ms since the epoch). */
function timeline(t0, t1) {
  const span = t1 - t0;
  return (start, end, className) => {
    const track = el("div", { className: "track" });
    const fill = el("div", { className: `bar ${className}` });
    const from = (Date.parse(start) - t0) / span;
    const to = ((end ? Date.parse(end) : t1) - t0) / span;
    fill.style.left = `${(Math.max(0, from) * 100).toFixed(2)}%`;
    fill.style.width = `${Math.max(0.4, (to - from) * 100).toFixed(2)}%`;
    track.append(fill);
    return track;
  };
}

/**
 * The rows of the tree of `inspection`:
 * - `t0`, `t1`: the session's first and last event times (the timeline);
 * - `unresolvedIds`, `waitingIds`: attemptKeys of the calls in flight, and of those a pause
 *   keeps open (they go on when its run does);
 * - `pausedRunOf`: pausedAbove; `pauseText`: each paused run's pause, by runId;
 * - `requestOf(eventId)`: a listed event; `causeText(eventId)`: the words for a cause;
 * - `select(eventId)`: shows an event (a click on an attempt shows its request).
 */
export function treeRows(inspection, view) {
  const bar = timeline(view.t0, view.t1);
  const rows = [];
  const renderRun = (run, depth) => {
    const status = shownStatus(run, view.pausedRunOf);
    rows.push(
      el(
        "div",
        { className: `row run-row status-${status}`, testId: "run-row" },
        el(
          "div",
          { className: "label" },
          el("span", { className: "indent", text: "  ".repeat(depth) + (depth ? "└ " : "") }),
          el("strong", { text: run.actor ? run.actor.id : run.runId }),
          el("span", {
            className: `badge ${status}`,
            text: status,
            title:
              status === "paused"
                ? `waiting with run ${view.pausedRunOf.get(run.runId)} for a person's decision`
                : undefined,
          }),
          el("span", { className: "muted", text: ` ${duration(run.durationMs)} · ${run.runId}` }),
          run.status !== "running" && run.status !== "completed" && run.result !== undefined
            ? reasonSpan(runResultText(run.result))
            : null,
          run.causedByEventId
            ? el("span", {
                className: "cause",
                text: ` ← ${view.causeText(run.causedByEventId)}`,
              })
            : null,
        ),
        bar(run.startedAt, run.endedAt, status),
      ),
    );
    // A child run sits under the call that caused it (by cause, as render-inspection.ts
    // places them: a scan of every child for every attempt was quadratic); the others after.
    const byCause = new Map();
    for (const child of run.children) {
      const key = child.causedByEventId;
      if (key === undefined) continue;
      if (!byCause.has(key)) byCause.set(key, []);
      byCause.get(key).push(child);
    }
    const placed = new Set();
    for (const step of run.steps) {
      step.attempts.forEach((attempt, index) => {
        rows.push(attemptRow(attempt, index, depth, view, bar));
        for (const child of byCause.get(attempt.requestEventId) ?? []) {
          placed.add(child);
          renderRun(child, depth + 1);
        }
        byCause.delete(attempt.requestEventId);
      });
    }
    for (const child of run.children) if (!placed.has(child)) renderRun(child, depth + 1);
    // Last under the paused run, as `inspect` prints its tree.
    const pause = view.pauseText.get(run.runId);
    if (pause !== undefined)
      rows.push(
        el(
          "div",
          { className: "row paused-row", testId: "paused-row" },
          el(
            "div",
            { className: "label", title: pause },
            el("span", { className: "indent", text: "  ".repeat(depth + 1) }),
            document.createTextNode(`⏸ ${pause}`),
          ),
        ),
      );
  };
  for (const run of inspection.runs) renderRun(run, 0);
  return rows;
}

function attemptRow(attempt, index, depth, view, bar) {
  const unresolved = view.unresolvedIds.has(attemptKey(attempt));
  // Open because its run is paused awaiting a decision: it goes on when the run does.
  const waiting = view.waitingIds.has(attemptKey(attempt));
  const status = unresolved
    ? "unresolved"
    : waiting
      ? "waiting"
      : attempt.status === "requested"
        ? "retried"
        : attempt.status;
  const requested = view.requestOf(attempt.requestEventId);
  const label = el(
    "div",
    { className: "label" },
    el("span", {
      className: "indent",
      text: `${"  ".repeat(depth + 1)}${index > 0 ? "↻ " : "· "}`,
    }),
    el("span", { text: attemptName(attempt) }),
    el("span", {
      className: `badge ${status}`,
      text: unresolved ? "UNRESOLVED" : waiting ? "waiting on a decision" : status,
    }),
    el("span", { className: "muted", text: ` ${duration(attempt.durationMs)}` }),
    !unresolved && attempt.status !== "requested" && attempt.status !== "completed"
      ? reasonSpan(outcomeText(attempt.outcome))
      : null,
    requested?.causedByEventId
      ? el("span", {
          className: "cause",
          text: ` ← ${view.causeText(requested.causedByEventId)}`,
        })
      : null,
  );
  const row = el(
    "div",
    {
      className: `row attempt-row status-${status}${unresolved ? " unresolved" : ""}`,
      testId: "attempt-row",
    },
    label,
    bar(attempt.requestedAt, attempt.resolvedAt, status),
  );
  row.dataset.attemptId = attempt.attemptId;
  row.addEventListener("click", () => view.select(attempt.requestEventId));
  return row;
}
