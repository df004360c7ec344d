// The boxes a person decides from, above the run tree: the runs not intact (no decision is to be
// made from what they show), the runs paused awaiting a decision, and the unresolved attempts
// with their next steps. The server decides each next step as
// `agent-ledger inspect` does (next-steps.ts); these are its words.
import { attemptLabel, commandBlock, el, selectable, sentence, value } from "./dom.js";
import { counted, preview } from "./format.js";

// What the person checks before deciding, as inspect prints it: whether the call writes, and
// what it was asked to do.
function attemptFacts(attempt) {
  const effect = attempt.effect;
  const request = preview(attempt.request, 100);
  if (typeof effect !== "object" || effect === null) return sentence`request: ${request}`;
  const idempotent = effect.idempotent === true ? "idempotent" : "not idempotent";
  return sentence`effect: ${effect.kind ?? "unknown"}, ${idempotent} · request: ${request}`;
}

function nextStepText(attempt, step) {
  if (step.action === "check-by-hand")
    return sentence`Run ${attempt.runId} is ${step.runStatus}: it takes no more events and will not be resumed; check the effect by hand.`;
  if (step.action === "decide-inner-first")
    return "This agent call waits on a call in flight inside its child run: decide that call first.";
  if (step.action === "decide-outer-first")
    return sentence`Made inside an agent's call that is a decision itself (attempt ${step.attemptId} on run ${step.runId}), which the next resume asks about first: decide that call first. Abandoned, it abandons this call too; approved, its agent runs again and this call is decided then.`;
  if (step.action === "settled-with-outer") return settledWithOuterText(attempt);
  // Inspect's words (made-again-text.ts), sent by the server: why there is nothing to decide.
  return `Next: ${attempt.madeAgain ?? "nothing to decide; the next resume makes this call again by itself"}.`;
}

// A call approved for a re-run (`resolve --approve`): who, when and why, and what it does, as
// inspect prints it under the call (the server's `approval`, made-again-text.ts).
function approvalLine(attempt) {
  const text = attempt.approval;
  if (typeof text !== "string") return null;
  return el(
    "div",
    { testId: "approval" },
    value(`${text.charAt(0).toUpperCase()}${text.slice(1)}`),
    ".",
  );
}

// A call in flight inside a tool call that ended: settling that call abandons this one. The
// server's words (`settled`, settled-with-outer.ts's settledWithOuterParts), the command that
// settles it now in a block of its own, to copy as a resolve command is.
function settledWithOuterText(attempt) {
  const { before, command, after } = attempt.settled;
  const said = document.createDocumentFragment();
  said.append(
    value(`${before.charAt(0).toUpperCase()}${before.slice(1)}`),
    command === undefined ? "" : commandBlock(command),
    value(after),
    ".",
  );
  return said;
}

// An agent call declared idempotent whose agent's calls may not all be in the ledger: why it is
// a decision (render-inspection's words, and made-again-text.ts's agentCallUnseen: one declared
// not idempotent is a decision for that alone).
function decisionWhy(attempt, step) {
  // A call left in flight that a paused run asks about as an approval (next-steps.ts).
  if (step.pausedRunId !== undefined)
    return sentence`It was left in flight by a crash or by its caller stopping it, and may have had its effect; run ${step.pausedRunId} is paused asking about it as an approval. Check the effect, then decide it in the app, or here (then resume the run without a state: the decision is applied to it): `;
  const text =
    attempt.effectInChildRuns === true && attempt.effect?.idempotent === true
      ? "What its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it: check the effect, then: "
      : "Check the effect, then: ";
  return document.createTextNode(text);
}

// Under a call's resolve command, as inspect prints it (the server's `decide`,
// made-again-text.ts): what the reason does, and --approve, the other decision.
function resolveHintLine(attempt) {
  const text = attempt.decide;
  if (typeof text !== "string") return null;
  return el(
    "div",
    { className: "muted", testId: "resolve-hint" },
    value(`${text.charAt(0).toUpperCase()}${text.slice(1)}`),
    ".",
  );
}

// Unresolved attempts listed before "show all": a crash of a batch can leave a thousand.
const UNRESOLVED_SHOWN = 100;

/**
 * The unresolved attempts (each `{ attempt, step }`, the calls a pause keeps open left out) in
 * `section`, each with what to do about it; `select(eventId)` shows an attempt's request. The
 * first UNRESOLVED_SHOWN of them unless `all`; `showAll()` is asked to show them all.
 */
export function renderUnresolved(section, unresolved, select, { all = false, showAll } = {}) {
  if (unresolved.length === 0) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  const list = el("ul");
  const shown = all ? unresolved : unresolved.slice(0, UNRESOLVED_SHOWN);
  for (const { attempt, step } of shown) {
    const next =
      step.action === "resolve"
        ? el(
            "span",
            {},
            decisionWhy(attempt, step),
            commandBlock(step.command),
            resolveHintLine(attempt),
          )
        : el("span", { className: "muted" }, nextStepText(attempt, step));
    const item = el(
      "li",
      {},
      el("strong", {}, `${attempt.kind} `, value(attempt.name || "")),
      sentence` requested ${attempt.requestedAt} on run ${attempt.runId} (seq ${attempt.requestSeq}), no outcome recorded. `,
      approvalLine(attempt),
      next,
      // As inspect says it: the command shows the store URL's password as ***.
      step.passwordLeftOut
        ? el("div", { className: "muted", testId: "password-left-out", text: PASSWORD_LEFT_OUT })
        : null,
      el("div", { className: "muted" }, attemptFacts(attempt)),
    );
    selectable(
      item,
      `unresolved ${attempt.kind} ${attempt.name || ""} on run ${attempt.runId}, seq ${attempt.requestSeq}: show its request`,
      () => select(attempt.requestEventId),
    );
    list.append(item);
  }
  const more = unresolved.length - shown.length;
  let showing = null;
  if (more > 0 && showAll) {
    showing = el("button", { text: `show all ${unresolved.length}`, testId: "all-unresolved" });
    showing.addEventListener("click", showAll);
  }
  section.replaceChildren(
    el("h2", {
      text: `⚠ ${counted(unresolved.length, "unresolved attempt")}: in flight, or left so by a crash or by its caller stopping it`,
    }),
    list,
  );
  if (more > 0) section.append(el("p", { className: "muted" }, `… and ${more} more. `, showing));
}

/**
 * The runs paused awaiting a decision in `section`, under `heading` (the server's
 * `pausedHeading`, as inspect prints it: paused-runs.ts): each with the calls it waits on and how
 * to decide them, and the calls its pause keeps open (`waiting`: `{ attempt, step }`), which are
 * not lost in a crash and take no `resolve`.
 */
export function renderPaused(section, pauses, heading, waiting) {
  section.hidden = pauses.length === 0;
  if (pauses.length === 0) return section.replaceChildren();
  const items = pauses.map((paused) => {
    const open = waiting
      .filter(({ step }) => step.runId === paused.runId)
      .flatMap(({ attempt }, index) => [index > 0 ? ", " : "", attemptLabel(attempt)]);
    return el(
      "li",
      {},
      el("p", { testId: "paused-run" }, sentence`Run ${paused.runId} is ${paused.text}.`),
      open.length > 0
        ? el("p", { className: "muted" }, "Open while it waits (not lost in a crash): ", ...open)
        : null,
    );
  });
  section.replaceChildren(el("h2", { text: heading }), el("ul", {}, ...items));
}

/**
 * The runs open with nothing in flight (the server's `openRuns`, open-runs.ts) in `section`,
 * under `heading` (its `openRunsHeading`): the page cannot tell a run at work from one whose
 * process died, and each says what to do, in inspect's words.
 */
export function renderOpenRuns(section, openRuns, heading) {
  section.hidden = openRuns.length === 0;
  if (openRuns.length === 0) return section.replaceChildren();
  const items = openRuns.map((run) =>
    el("li", {}, el("p", { testId: "open-run" }, sentence`Run ${run.runId}: `, `${run.text}.`)),
  );
  section.replaceChildren(el("h2", { text: heading }), el("ul", {}, ...items));
}

const PASSWORD_LEFT_OUT =
  "The store URL's password is left out, shown as ***: put it back, or set AGENT_LEDGER_STORE to the URL and drop --store.";

/**
 * What `inspect` says of a run whose seqs have a gap (`gap`: one of the server's `notIntact`,
 * page-inspection.ts), its run id a value and its `verify` command in its own element, to copy
 * as a resolve command is.
 */
export function notIntactLine(gap) {
  const said = document.createDocumentFragment();
  if (!gap.command) {
    said.append(value(gap.text));
    return said;
  }
  said.append(
    sentence`run ${gap.runId} is not intact (`,
    `${gap.what}): run `,
    commandBlock(gap.command),
  );
  return said;
}

/**
 * The runs whose seqs have a gap (rows deleted by hand, or lost) in `section`, above the boxes
 * a person decides from: what the page shows of them (a completed call listed as unresolved, a
 * status) is not what was recorded.
 */
export function renderNotIntact(section, notIntact) {
  section.hidden = notIntact.length === 0;
  if (notIntact.length === 0) return section.replaceChildren();
  const items = notIntact.map((gap) =>
    el(
      "li",
      {},
      el("p", { testId: "not-intact-run" }, notIntactLine(gap)),
      gap.passwordLeftOut ? el("p", { className: "muted", text: PASSWORD_LEFT_OUT }) : null,
    ),
  );
  section.replaceChildren(
    el("h2", {
      text: `⚠ ${notIntact.length} run${notIntact.length === 1 ? " is" : "s are"} not intact: events are missing, so what the page shows of ${notIntact.length === 1 ? "it" : "them"} (status, calls in flight, unresolved attempts) is not what was recorded. Verify the session before deciding anything from it.`,
    }),
    el("ul", {}, ...items),
  );
}
