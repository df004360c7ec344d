// The sessions list: a page at a time (by session id); "more sessions" fetches the next one.
import { api, el } from "./dom.js";
import { OPEN_LINK, sessionHref } from "./format.js";

// A session's id as the link to its page: the first cell of a row of sessions.
export function sessionLinkCell(sessionId) {
  return el(
    "td",
    {},
    el("a", { text: sessionId, href: sessionHref(sessionId), className: "session-link" }),
  );
}

// A table of sessions, its columns headed `headings`, its rows in `body`.
export function sessionsTable(testId, headings, body) {
  const head = el("tr");
  for (const heading of headings) head.append(el("th", { text: heading }));
  return el("table", { className: "grid", testId }, el("thead", {}, head), body);
}

function sessionRow(session) {
  return el(
    "tr",
    {},
    sessionLinkCell(session.sessionId),
    el("td", { text: session.eventCount, className: "num" }),
    el("td", { text: session.createdAt }),
    el("td", { text: session.updatedAt }),
  );
}

// Draws the list into `main` (`isCurrent`: false once the person moved on).
export async function showSessions(main, isCurrent) {
  const first = await api("/api/sessions");
  if (!isCurrent()) return;
  const body = el("tbody");
  const table = sessionsTable("sessions", ["session", "events", "created", "updated"], body);
  for (const session of first.sessions) body.append(sessionRow(session));
  const more = el("button", { text: "more sessions", testId: "more-sessions" });
  let next = first.nextCursor;
  more.hidden = next === undefined;
  const failure = el("p", { className: "bad", testId: "more-sessions-error" });
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const page = await api(`/api/sessions?after=${encodeURIComponent(next)}`);
      for (const session of page.sessions) body.append(sessionRow(session));
      next = page.nextCursor;
      more.hidden = next === undefined;
      failure.remove();
    } catch (error) {
      // Said where the person clicked; the button stays, to try again.
      failure.textContent = `Could not fetch more sessions: ${error.message}`;
      more.after(failure);
    } finally {
      more.disabled = false;
    }
  });
  main.replaceChildren(
    el("h1", { text: "Sessions" }),
    el(
      "p",
      {},
      el("a", { text: "Sessions with something open", href: OPEN_LINK, testId: "open-link" }),
      " (calls in flight, runs paused or open)",
    ),
    first.sessions.length === 0
      ? el("p", { className: "muted", text: "No sessions in this store." })
      : table,
    more,
  );
}
