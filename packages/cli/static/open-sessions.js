// The sessions with something open (`#/open`), as `agent-ledger sessions --unresolved` lists
// them: the question after a crash, which sessions had calls in flight? Each session is read
// whole on the server, a hundred a request: the page asks for the next as soon as one comes,
// shows what it found so far, and stops when the person moves on.
import { api, el, setText } from "./dom.js";
import { counted, countText, openWorkText } from "./format.js";
import { sessionLinkCell, sessionsTable } from "./sessions-list.js";

function sessionRow(session) {
  return el(
    "tr",
    {},
    sessionLinkCell(session.sessionId),
    el("td", { text: countText(session.eventCount), className: "num" }),
    el("td", { text: session.updatedAt }),
    el("td", { text: openWorkText(session), testId: "open-work" }),
  );
}

// Draws the list into `main`, reading on until every session is read (`isCurrent`: false once
// the person moved on, which stops it). `announce`, the page's polite status line, says the
// outcome once (all read, or a request failed), not each request's progress.
export async function showOpenSessions(main, isCurrent, announce) {
  const body = el("tbody");
  const table = sessionsTable("open-sessions", ["session", "events", "updated", "open"], body);
  table.hidden = true;
  const status = el("p", { className: "muted", testId: "open-status" });
  const failure = el("p", { className: "bad", testId: "open-error" });
  const retry = el("button", { text: "try again", testId: "open-retry" });
  main.replaceChildren(
    el("h1", { text: "Sessions with something open" }),
    el("p", {
      className: "muted",
      text: "Unresolved attempts (calls in flight: at work, or left so by a crash), runs paused at an approval, and runs open with nothing in flight, counted as agent-ledger inspect counts them. Every session is read whole: on a large ledger this takes as long as inspecting each.",
    }),
    status,
    table,
  );
  let after;
  let checked = 0;
  let found = 0;
  const say = (done) => {
    const read = counted(checked, "session");
    const open = `${countText(found)} with something open`;
    status.textContent = done ? `Read all ${read}: ${open}.` : `Reading… ${read} read, ${open}.`;
  };
  say(false);
  // Reads on from `after`; a failure is said with a button to go on from where it stopped.
  const readOn = async () => {
    for (;;) {
      let page;
      try {
        page = await api(
          `/api/open-work${after === undefined ? "" : `?after=${encodeURIComponent(after)}`}`,
        );
      } catch (error) {
        if (!isCurrent()) return;
        setText(failure, `Could not read more sessions: ${error.message}`);
        if (announce) setText(announce, failure.textContent);
        failure.append(" ", retry);
        status.after(failure);
        return;
      }
      if (!isCurrent()) return;
      checked += page.checked;
      found += page.sessions.length;
      for (const session of page.sessions) body.append(sessionRow(session));
      table.hidden = found === 0;
      after = page.nextCursor;
      say(after === undefined);
      if (after === undefined) break;
    }
    if (announce) setText(announce, status.textContent);
    if (found === 0)
      table.replaceWith(
        el("p", {
          testId: "nothing-open",
          text: "No session has an unresolved attempt, a paused run or a run open.",
        }),
      );
  };
  retry.addEventListener("click", () => {
    failure.remove();
    readOn();
  });
  await readOn();
}
