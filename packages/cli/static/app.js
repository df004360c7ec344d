// agent-ledger viewer: its entry module. Read-only, no dependencies, no build step: the page
// loads it as an ES module, and it imports the others (each named after what it draws).
// Every value from the ledger is put into the page as text (never innerHTML), isolated from the
// page's words and its direction controls escaped (dom.js): a payload holding <script> or HTML
// is shown as text and never runs or renders as markup.
import { api, el, sentence } from "./dom.js";
import { OPEN_LINK } from "./format.js";
import { showOpenSessions } from "./open-sessions.js";
import { SessionView } from "./session-view.js";
import { showSessions } from "./sessions-list.js";

const main = document.getElementById("main");
const live = document.getElementById("live");
const announce = document.getElementById("announce");
let view = { stop() {} };

// A session's page, `#/session/<id>`, or one of its events chosen, `#/session/<id>/event/<eventId>`
// (a link sent to a colleague): each part encoded, so the first `/event/` ends the session id.
const EVENT_LINK = /^#\/session\/(.+?)\/event\/([^/]+)$/;
const SESSION_LINK = /^#\/session\/(.+)$/;

// Each navigation has a number: a page that answers after the person moved on draws nothing.
let navigation = 0;

async function route() {
  const current = ++navigation;
  const isCurrent = () => current === navigation;
  view.stop();
  view = { stop() {} };
  const match = EVENT_LINK.exec(location.hash) ?? SESSION_LINK.exec(location.hash);
  try {
    if (match) {
      const session = new SessionView(decodeURIComponent(match[1]), {
        main,
        live,
        announce,
        eventId: match[2] === undefined ? undefined : decodeURIComponent(match[2]),
      });
      view = session;
      await session.start();
    } else if (location.hash === OPEN_LINK) {
      await showOpenSessions(main, isCurrent, announce);
    } else {
      await showSessions(main, isCurrent);
    }
  } catch (error) {
    if (!isCurrent()) return;
    main.replaceChildren(
      el("h1", { text: "Error" }),
      el("p", { className: "bad", text: String(error.message) }),
    );
  }
}

async function init() {
  try {
    const config = await api("/api/config");
    const { kind, location: where } = config.store;
    document
      .getElementById("store-info")
      .replaceChildren(where ? sentence`${kind} · ${where}` : sentence`${kind}`);
  } catch {
    // Shown by the route below.
  }
  window.addEventListener("hashchange", route);
  await route();
}

init();
