// Building the page: every value from the ledger goes in with textContent (never innerHTML), so
// a payload holding <script> or HTML is shown as text and never runs or renders as markup.
import { preview } from "./format.js";

const token = new URLSearchParams(location.search).get("token");

export function el(tag, options = {}, ...children) {
  const node = document.createElement(tag);
  if (options.className) node.className = options.className;
  if (options.text !== undefined) node.textContent = String(options.text);
  if (options.title) node.title = String(options.title);
  if (options.href) node.href = options.href;
  if (options.testId) node.dataset.testid = options.testId;
  for (const child of children) if (child) node.append(child);
  return node;
}

/** GET a JSON API path with the page's token; an error response throws its message. */
export async function api(path) {
  const headers = token ? { "X-Agent-Ledger-Token": token } : {};
  const response = await fetch(path, { headers, cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// A failure reason beside a run or an attempt, cut to a line; all of it on hover.
export function reasonSpan(value) {
  const text = preview(value, 100);
  return text
    ? el("span", { className: "reason", text: ` ${text}`, title: preview(value, 2000) })
    : null;
}

// Laying out megabytes of text holds the tab for seconds (30 MB: 15 s): a huge payload shows
// its start, and all of it when asked.
const SHOWN_CHARS = 256 * 1024;

export function longText(className, text) {
  if (text.length <= SHOWN_CHARS) return el("pre", { className, text });
  const pre = el("pre", { className, text: text.slice(0, SHOWN_CHARS) });
  const showAll = el("button", {
    text: `show all ${text.length.toLocaleString("en-US")} characters`,
  });
  showAll.addEventListener("click", () => {
    pre.textContent = text;
    note.remove();
  });
  const note = el(
    "p",
    { className: "muted" },
    document.createTextNode(`The first ${SHOWN_CHARS.toLocaleString("en-US")} characters. `),
    showAll,
  );
  return el("div", {}, note, pre);
}
