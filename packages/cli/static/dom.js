// Building the page: every value from the ledger goes in as text nodes (never innerHTML), so
// a payload holding <script> or HTML is shown as text and never runs or renders as markup.
// A value sits in an element of its own, isolated from the page's words around it (`value`,
// `sentence`; style.css isolates the inline elements), and the invisible characters that set
// the direction of text are shown as escapes: a tool named `transfer_funds\u202e` cannot
// reverse the sentence, the command or the arguments the page writes after it.
import { countText, preview } from "./format.js";

const token = new URLSearchParams(location.search).get("token");

// The direction controls (ALM, LRM, RLM, the embeddings and overrides, the isolates), as the
// terminal output escapes them (format.ts).
const DIRECTION_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const HAS_DIRECTION_CONTROL = new RegExp(DIRECTION_CONTROL.source);

function escaped(character) {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** `text` as the page shows it: text nodes, each direction control a marked escape (`\u202e`). */
function shownNodes(text) {
  if (!HAS_DIRECTION_CONTROL.test(text)) return document.createTextNode(text);
  const nodes = document.createDocumentFragment();
  let from = 0;
  for (const match of text.matchAll(DIRECTION_CONTROL)) {
    if (match.index > from) nodes.append(text.slice(from, match.index));
    const shown = document.createElement("span");
    shown.className = "control";
    shown.textContent = escaped(match[0]);
    shown.title = "an invisible character that sets the direction of text, in the value";
    nodes.append(shown);
    from = match.index + 1;
  }
  if (from < text.length) nodes.append(text.slice(from));
  return nodes;
}

/** Puts `text` (from the ledger or not) in `node`, in place of what it held. */
export function setText(node, text) {
  node.replaceChildren(shownNodes(String(text)));
}

export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) setText(node, options.text);
  if (options.title) node.title = String(options.title).replace(DIRECTION_CONTROL, escaped);
  if (options.href) node.href = options.href;
  if (options.testId) node.dataset.testid = options.testId;
  for (const child of children) if (child) node.append(child);
  return node;
}

/**
 * Makes `node`, a row or an item a click opens, usable from the keyboard: reached by Tab, opened
 * by Enter or Space, and named `name` for a screen reader (its direction controls escaped, as a
 * title's are). `choose()` opens it. A button or link inside it keeps its own click and keys,
 * and a click on a command to copy (commandBlock) selects the command, not the item: opening it
 * scrolled the page away from what the person was copying.
 */
export function selectable(node, name, choose) {
  node.tabIndex = 0;
  node.setAttribute("aria-label", String(name).replace(DIRECTION_CONTROL, escaped));
  const inControl = (target) => {
    const control = target instanceof Element ? target.closest("button, a, .command") : null;
    return control !== null && control !== node && node.contains(control);
  };
  node.addEventListener("click", (clickEvent) => {
    if (!inControl(clickEvent.target)) choose();
  });
  node.addEventListener("keydown", (keyEvent) => {
    if (keyEvent.target !== node || (keyEvent.key !== "Enter" && keyEvent.key !== " ")) return;
    // Space would scroll the page as well.
    keyEvent.preventDefault();
    choose();
  });
  return node;
}

/**
 * A command for the person to run (`agent-ledger resolve ...`, `verify ...`), copied as a unit:
 * in a block of its own that a click selects whole (style.css: `user-select: all`), and a
 * "copy" button. The button copies with the clipboard API (the viewer is served on 127.0.0.1, a
 * secure context); where the page has none, or it refuses, it selects the command for the
 * person to copy.
 */
export function commandBlock(command) {
  const code = el("code", { text: command });
  const copy = el("button", { text: "copy", testId: "copy-command" });
  copy.type = "button";
  copy.setAttribute("aria-label", "copy the command");
  const selectIt = () => {
    const range = document.createRange();
    range.selectNodeContents(code);
    const selection = getSelection();
    selection?.removeAllRanges();
    selection?.addRange(range);
  };
  copy.addEventListener("click", async () => {
    try {
      if (!navigator.clipboard) throw new Error("no clipboard");
      await navigator.clipboard.writeText(command);
      setText(copy, "copied");
    } catch {
      selectIt();
      setText(copy, "selected: copy it");
    }
  });
  return el("span", { className: "command" }, code, copy);
}

/** A value from the ledger inside the page's words: isolated (`<bdi>`), its controls escaped. */
export function value(text) {
  return el("bdi", { text });
}

/**
 * The page's words with values from the ledger in them, each a `value`:
 * sentence`requested ${at} on run ${runId}`.
 */
export function sentence(words, ...values) {
  const nodes = document.createDocumentFragment();
  words.forEach((word, index) => {
    if (word) nodes.append(word);
    if (index < values.length) nodes.append(value(values[index]));
  });
  return nodes;
}

/**
 * GET a JSON API path with the page's token; an error response throws its message, with the
 * API's `code` (`not-found`, ...) on the error.
 */
export async function api(path) {
  const headers = token ? { "X-Agent-Ledger-Token": token } : {};
  const response = await fetch(path, { headers, cache: "no-store" });
  const body = await response.json();
  if (!response.ok)
    throw Object.assign(new Error(body.error || `HTTP ${response.status}`), { code: body.code });
  return body;
}

// A failure reason beside a run or an attempt, cut to a line; all of it on hover.
export function reasonSpan(reason) {
  const text = preview(reason, 100);
  return text
    ? el("span", { className: "reason", title: preview(reason, 2000) }, " ", value(text))
    : null;
}

// Laying out megabytes of text holds the tab for seconds (30 MB: 15 s): a huge payload shows
// its start, and all of it when asked.
const SHOWN_CHARS = 256 * 1024;

export function longText(className, text) {
  if (text.length <= SHOWN_CHARS) return el("pre", { className, text });
  const pre = el("pre", { className, text: text.slice(0, SHOWN_CHARS) });
  const showAll = el("button", {
    text: `show all ${countText(text.length)} characters`,
  });
  showAll.addEventListener("click", () => {
    setText(pre, text);
    note.remove();
  });
  const note = el(
    "p",
    { className: "muted" },
    document.createTextNode(`The first ${countText(SHOWN_CHARS)} characters. `),
    showAll,
  );
  return el("div", {}, note, pre);
}

/** An attempt as the page names it (`tool charge [c1]`), its name and call id each a value. */
export function attemptLabel(attempt) {
  return attempt.toolCallId
    ? sentence`${attempt.kind} ${attempt.name || ""} [${attempt.toolCallId}]`
    : sentence`${attempt.kind} ${attempt.name || ""}`;
}
