// The run tree: each run with its status, duration and cause, its attempts (retries marked ↻)
// with child runs under the call that caused them, a bar per row on the session's timeline,
// and the pause of a run paused awaiting a decision last under it, as `inspect` prints it; a run
// whose seqs have a gap says so first under it.
import { notIntactLine } from "./decision-boxes.js";
import { attemptLabel, el, reasonSpan, selectable, sentence, value } from "./dom.js";
import { attemptKey, countText, duration, outcomeText, runResultText, tokens } from "./format.js";

// The runs of the trees under `runs` in tree order, each with its depth: each run before its
// children, the children in order, each subtree whole before the next sibling (ledger-core's
// runsInTreeOrder). Walked with a stack of its own: a chain of child runs (handoff after
// handoff) overflowed the call stack at a few thousand.
export function flattenRuns(runs) {
  const order = [];
  const pending = [];
  // Pushed last to first: taken first to last.
  const later = (children, depth) => {
    for (let index = children.length - 1; index >= 0; index--)
      pending.push({ run: children[index], depth });
  };
  later(runs, 0);
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    order.push(entry);
    later(entry.run.children, entry.depth + 1);
  }
  return order;
}

// The paused run each run waits with, by runId: the server's `pausedWith` of each run
// (paused-runs.ts's waitingWithPause), the one rule `inspect` follows too: a run paused awaiting
// a decision and the runs under it, but for those a crash left under a call in flight that the
// pause asks about.
export function pausedAbove(runs) {
  const above = new Map();
  for (const { run } of flattenRuns(runs))
    if (run.pausedWith !== undefined) above.set(run.runId, run.pausedWith);
  return above;
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

// A long run is shown a part at a time: its first STEPS_SHOWN steps, STEPS_MORE more on each
// request; a step of more than ATTEMPTS_BOUND attempts (a call retried hundreds of times) shows
// its first and last ATTEMPTS_BOUND / 2, all of them on request. A row for each of 50,000
// steps held the tab for minutes.
const STEPS_SHOWN = 100;
const STEPS_MORE = 1000;
const ATTEMPTS_BOUND = 20;
const FORCED_SHOWN = 100;

/**
 * The rows of the tree of `inspection` (the server's, see page-inspection.ts):
 * - `t0`, `t1`: the session's first and last event times (the timeline);
 * - `unresolvedIds`, `waitingIds`: attemptKeys of the calls in flight, and of those a pause
 *   keeps open (they go on when its run does);
 * - `pausedRunOf`: pausedAbove; `pauseText`: each paused run's pause, by runId;
 * - `notIntact`: the server's `notIntact` of each run whose seqs have a gap, by runId;
 * - `causeText(eventId)`: the words for a cause; `select(eventId)`: shows an event (a click on
 *   an attempt shows its request);
 * - `shown`: what the person opened, `{ steps: Map(runId => count), attempts: Set(stepKey) }`;
 *   `redraw()` draws the tree again once a control opened more.
 */
export function treeRows(inspection, view) {
  const bar = timeline(view.t0, view.t1);
  const rows = [];
  // The runs being drawn, the innermost last: each a runParts, which yields its rows and, in
  // their place among them, its child runs, drawn whole before its next row. A stack of its
  // own: drawn by recursion, a chain of about 1,500 child runs overflowed the call stack.
  const drawing = [];
  for (const run of [...inspection.runs].reverse()) drawing.push(runParts(run, 0, view, bar));
  while (drawing.length > 0) {
    const part = drawing[drawing.length - 1].next();
    if (part.done) drawing.pop();
    else if (part.value instanceof Node) rows.push(part.value);
    else drawing.push(runParts(part.value.run, part.value.depth, view, bar));
  }
  return rows;
}

/**
 * The rows of `run`, `depth` levels deep in the tree, with each of its child runs
 * (`{ run, depth }`) where the child's rows go.
 */
function* runParts(run, depth, view, bar) {
  const status = shownStatus(run, view.pausedRunOf);
  yield el(
    "div",
    { className: `row run-row status-${status}`, testId: "run-row" },
    el(
      "div",
      { className: "label" },
      indentSpan(depth, depth ? "└ " : ""),
      el("strong", { text: run.actor ? run.actor.id : run.runId }),
      el("span", {
        className: `badge ${status}`,
        text: status,
        title:
          status === "paused"
            ? `waiting with run ${view.pausedRunOf.get(run.runId)} for a person's decision`
            : undefined,
      }),
      el("span", { className: "muted" }, sentence` ${duration(run.durationMs)} · ${run.runId}`),
      run.usage ? el("span", { className: "muted tokens", text: ` · ${tokens(run.usage)}` }) : null,
      run.status !== "running" && run.status !== "completed" && run.result !== undefined
        ? reasonSpan(runResultText(run.result))
        : null,
      run.causedByEventId
        ? el("span", { className: "cause" }, " ← ", view.causeText(run.causedByEventId))
        : null,
    ),
    bar(run.startedAt, run.endedAt, status),
  );
  // First under the run, before anything read from it, as `inspect` prints it: what follows
  // is not what was recorded.
  const gap = view.notIntact.get(run.runId);
  if (gap !== undefined)
    yield el(
      "div",
      { className: "row not-intact-row", testId: "not-intact-row" },
      el("div", { className: "label" }, indentSpan(depth + 1), "⚠ ", notIntactLine(gap)),
    );
  // Then, under the child run of an agent call, as `inspect` warns: its agent may have run calls
  // the ledger does not hold (the server's words, unrecorded-agent-calls.ts).
  if (typeof run.unrecorded === "string") yield unrecordedRow(depth, run.unrecorded);
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
  // The child runs of calls not shown wait with them.
  const hidden = (attempt) => {
    for (const child of byCause.get(attempt.requestEventId) ?? []) placed.add(child);
  };
  const stepsShown = view.shown.steps.get(run.runId) ?? STEPS_SHOWN;
  // A call in flight, or one a pause keeps open, is shown in its place past the steps shown
  // (the first FORCED_SHOWN of them: a crashed batch of thousands stays behind the control).
  let forced = 0;
  const mustShow = (attempt) =>
    view.unresolvedIds.has(attemptKey(attempt)) || view.waitingIds.has(attemptKey(attempt));
  // The steps hidden since the last one shown, and whether the control was shown already.
  let hiddenSteps = 0;
  let controlShown = false;
  const stepsControl = function* (total) {
    if (hiddenSteps === 0) return;
    const text = `… ${countText(hiddenSteps)} more steps of this run, and the runs under them`;
    hiddenSteps = 0;
    if (controlShown) {
      yield moreRow(depth, text);
      return;
    }
    controlShown = true;
    yield moreRow(
      depth,
      text,
      `show the next ${countText(Math.min(total, STEPS_MORE))}`,
      "more-steps",
      () => {
        view.shown.steps.set(run.runId, stepsShown + STEPS_MORE);
        view.redraw();
      },
    );
  };
  const moreSteps = Math.max(0, run.steps.length - stepsShown);
  for (const [stepIndex, step] of run.steps.entries()) {
    if (stepIndex >= stepsShown) {
      if (forced >= FORCED_SHOWN || !step.attempts.some(mustShow)) {
        step.attempts.forEach(hidden);
        hiddenSteps++;
        continue;
      }
      forced++;
      yield* stepsControl(moreSteps);
    }
    const stepKey = `${run.runId}\n${step.stepId}`;
    const count = step.attempts.length;
    const open = count <= ATTEMPTS_BOUND || view.shown.attempts.has(stepKey);
    const half = ATTEMPTS_BOUND / 2;
    // The middle attempts of a long step hidden, but one in flight; the control first of them.
    let attemptsControl = false;
    for (const [index, attempt] of step.attempts.entries()) {
      if (!open && index >= half && index < count - half && !mustShow(attempt)) {
        hidden(attempt);
        if (!attemptsControl) {
          attemptsControl = true;
          const shownToo = step.attempts.slice(half, count - half).filter(mustShow).length;
          yield moreRow(
            depth,
            `… ${countText(count - 2 * half - shownToo)} more attempts of this call`,
            "show all",
            "more-attempts",
            () => {
              view.shown.attempts.add(stepKey);
              view.redraw();
            },
          );
        }
        continue;
      }
      yield attemptRow(attempt, index, depth, view, bar);
      // An agent call that completed with no child run: its agent recorded nothing.
      if (typeof attempt.nothingRecorded === "string")
        yield unrecordedRow(depth, attempt.nothingRecorded);
      for (const child of byCause.get(attempt.requestEventId) ?? []) {
        placed.add(child);
        yield { run: child, depth: depth + 1 };
      }
      byCause.delete(attempt.requestEventId);
    }
  }
  yield* stepsControl(moreSteps);
  for (const child of run.children) if (!placed.has(child)) yield { run: child, depth: depth + 1 };
  // Last under the paused run, as `inspect` prints its tree.
  const pause = view.pauseText.get(run.runId);
  if (pause !== undefined)
    yield el(
      "div",
      { className: "row paused-row", testId: "paused-row" },
      el("div", { className: "label", title: pause }, indentSpan(depth + 1), sentence`⏸ ${pause}`),
    );
}

// Levels of the tree indented: a row deeper (a chain of thousands of child runs, handoff after
// handoff) is indented as those are, and says its level, where 5,000 levels were a row of
// 10,000 spaces with its words out of sight.
const INDENT_LEVELS = 20;

/** The indentation of a row `depth` levels deep, then `mark` (`└ `, `↻ `). */
function indentSpan(depth, mark = "") {
  if (depth <= INDENT_LEVELS)
    return el("span", { className: "indent", text: `${"  ".repeat(depth)}${mark}` });
  const level = countText(depth);
  return el("span", {
    className: "indent",
    text: `${"  ".repeat(INDENT_LEVELS - 1)}⋯${level} ${mark}`,
    title: `${level} levels deep: indented as ${INDENT_LEVELS} are`,
  });
}

// A warning that what the tree shows here may not be all that ran (`inspect`'s `!!` lines).
function unrecordedRow(depth, text) {
  return el(
    "div",
    { className: "row unrecorded-row", testId: "unrecorded-row" },
    el("div", { className: "label" }, indentSpan(depth + 1), "⚠ ", value(text)),
  );
}

// A row in place of the rows not shown, with the control that shows them (none when `action`
// is not given: the control is on a row above).
function moreRow(depth, text, action, testId, open) {
  let button = null;
  if (action !== undefined) {
    button = el("button", { text: action, testId });
    button.addEventListener("click", (clickEvent) => {
      clickEvent.stopPropagation();
      open();
    });
  }
  return el(
    "div",
    { className: "row more-row" },
    el(
      "div",
      { className: "label" },
      indentSpan(depth + 1),
      el("span", { className: "muted", text: `${text} ` }),
      button,
    ),
  );
}

// An ended call's duration, as inspect says it (render-inspection.ts): an abandoned call's is the
// time from its request to the abandonment a person or a resume decided, not a runtime; a call
// declined before it started did not run.
function durationText(attempt) {
  if (attempt.declined) return "declined before it ran";
  const text = duration(attempt.durationMs);
  return text && attempt.status === "abandoned" ? `${text} after it was requested` : text;
}

function attemptRow(attempt, index, depth, view, bar) {
  const unresolved = view.unresolvedIds.has(attemptKey(attempt));
  // Open because its run is paused awaiting a decision: it goes on when the run does.
  const waiting = view.waitingIds.has(attemptKey(attempt));
  // A LangGraph tool that paused at interrupt() (recorded as failed: the server's `pausedAt`,
  // as inspect says it) waits for a person's answer: nothing failed.
  const paused = !unresolved && !waiting && typeof attempt.pausedAt === "string";
  const status = unresolved
    ? "unresolved"
    : waiting
      ? "waiting"
      : paused
        ? "paused"
        : attempt.status === "requested"
          ? "retried"
          : attempt.status;
  const label = el(
    "div",
    { className: "label" },
    indentSpan(depth + 1, index > 0 ? "↻ " : "· "),
    el("span", {}, attemptLabel(attempt)),
    el("span", {
      className: `badge ${status}`,
      text: unresolved ? "UNRESOLVED" : waiting ? "waiting on a decision" : status,
    }),
    el("span", { className: "muted", text: ` ${durationText(attempt)}` }),
    // Which attempt it retries, as inspect's tree says it: a ↻ row alone says only that it is
    // a later attempt of its call.
    attempt.retryOf
      ? el(
          "span",
          { className: "muted", testId: "retry-of" },
          sentence` (retry of ${attempt.retryOf})`,
        )
      : null,
    // Approved for a re-run, it is unresolved until the next resume makes it again: who, when
    // and why, as inspect's tree says it (the server's `approval`, made-again-text.ts).
    unresolved && typeof attempt.approval === "string"
      ? el("span", { className: "approval", testId: "approval" }, " ", value(attempt.approval))
      : null,
    attempt.usage
      ? el("span", { className: "muted tokens", text: ` · ${tokens(attempt.usage)}` })
      : null,
    paused
      ? el("span", { className: "muted", testId: "paused-at", text: ` ${attempt.pausedAt}` })
      : !unresolved && attempt.status !== "requested" && attempt.status !== "completed"
        ? reasonSpan(outcomeText(attempt.outcome))
        : null,
    // The cause of its request (the server's note: the page holds a window of the events).
    attempt.causedByEventId
      ? el("span", { className: "cause" }, " ← ", view.causeText(attempt.causedByEventId))
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
  // A div is no control to a screen reader: a button, named by what the row says.
  row.setAttribute("role", "button");
  const call = attempt.toolCallId ? ` [${attempt.toolCallId}]` : "";
  selectable(
    row,
    `${index > 0 ? "retry of " : ""}${attempt.kind} ${attempt.name || ""}${call}, ${unresolved ? "unresolved" : waiting ? "waiting on a decision" : status}: show its request`,
    () => view.select(attempt.requestEventId),
  );
  return row;
}
